from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from lemon_skills import telemetry
from lemon_skills.tools import ToolContext, read_skill
from tests.helpers.events import Recorder, recording
from tests.helpers.skills import write_skill


def test_attach_detach_by_id_and_by_function():
    rec = Recorder()
    hid = telemetry.attach(rec)
    telemetry.emit("skill.load", {"key": "a"})
    assert telemetry.detach(hid)
    telemetry.emit("skill.load", {"key": "b"})
    assert [e.metadata["key"] for e in rec.events] == ["a"]
    telemetry.attach(rec)
    assert telemetry.detach(rec)
    assert not telemetry.detach(rec)


def test_handlers_can_subscribe_to_some_events():
    rec = Recorder()
    hid = telemetry.attach(rec, events=["skill.write"])
    try:
        telemetry.emit("skill.load", {"key": "a"})
        telemetry.emit("skill.write", {"name": "b"})
    finally:
        telemetry.detach(hid)
    assert [e.name for e in rec.events] == ["skill.write"]
    with pytest.raises(ValueError, match="unknown telemetry events"):
        telemetry.attach(rec, events=["skill.loaded"])


def test_a_failing_handler_is_logged_and_others_still_run(caplog):
    def broken(event: telemetry.Event) -> None:
        raise RuntimeError("boom")

    hid = telemetry.attach(broken)
    try:
        with recording() as rec, caplog.at_level(logging.ERROR):
            telemetry.emit("skill.load", {"key": "a"})
    finally:
        telemetry.detach(hid)
    assert len(rec.events) == 1
    assert "telemetry handler" in caplog.text and "boom" in caplog.text


def test_metadata_is_normalised_and_never_carries_content():
    with recording() as rec:
        telemetry.emit(
            "skill.write",
            {
                "name": "x",
                "missing": None,
                "ok": False,
                "path": Path("/tmp/x"),
                "keys": ["a", "b"],
                "reason": "r" * 900,
                "content": "secret body",
                "file_content": "secret file",
                "old_string": "secret old",
            },
        )
    meta = rec.events[0].metadata
    assert meta == {
        "name": "x",
        "ok": False,  # booleans stay booleans
        "path": "/tmp/x",
        "keys": ("a", "b"),
        "reason": "r" * 500,
    }
    assert rec.events[0].to_dict()["metadata"]["keys"] == ["a", "b"]


def test_events_become_opentelemetry_span_events(project, project_skills):
    write_skill(project_skills, "pdf")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("agent-turn"):
        read_skill.call({"key": "pdf"}, ToolContext(cwd=project, tool_call_id="c-9"))
    (span,) = exporter.get_finished_spans()
    (event,) = span.events
    assert event.name == "lemon_skills.skill.load"
    assert event.attributes is not None
    assert event.attributes["lemon_skills.key"] == "pdf"
    assert event.attributes["lemon_skills.tool_call_id"] == "c-9"
    assert event.attributes["lemon_skills.result"] == "ok"
    provider.shutdown()
