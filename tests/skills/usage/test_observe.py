from __future__ import annotations

import logging

from lemon_skills import introspection
from lemon_skills.skills.usage import observe
from lemon_skills.skills.usage.store import UsageStore

LOAD = {"key": "pdf", "result": "ok", "source": "global", "run_id": "r1", "agent_id": "a1"}


def test_a_load_is_counted_and_persisted_with_ids_in_their_columns():
    observe.emit("skill.load", LOAD)
    assert UsageStore.for_scope("global").get("pdf").get("load_count") == 1
    [row] = introspection.default_store().query(key="pdf")
    assert (row.type, row.result, row.run_id, row.agent_id) == (
        "skill_load_observed",
        "ok",
        "r1",
        "a1",
    )
    assert "run_id" not in row.payload and "agent_id" not in row.payload


def test_a_failed_load_is_persisted_but_not_counted():
    observe.emit("skill.load", {**LOAD, "result": "not_found"})
    assert UsageStore.for_scope("global").get("pdf").get("load_count", 0) == 0
    assert [r.result for r in introspection.default_store().query(key="pdf")] == ["not_found"]


def test_a_project_event_without_cwd_is_not_counted_anywhere():
    event = observe.emit("skill.load", {**LOAD, "source": "project"})
    assert observe.update_usage(event) is False


def test_turning_the_bridge_off_stops_recording():
    observe.set_bridge(False)
    observe.emit("skill.load", LOAD)
    assert introspection.default_store().query(key="pdf") == []
    observe.set_bridge(True)
    observe.emit("skill.load", LOAD)
    assert len(introspection.default_store().query(key="pdf")) == 1


def test_a_corrupt_sidecar_is_logged_and_the_event_still_persisted(caplog):
    sidecar = UsageStore.for_scope("global").path
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text("{corrupt", "utf-8")
    with caplog.at_level(logging.WARNING, logger=observe.__name__):
        observe.emit("skill.load", LOAD)
    assert "skill usage not recorded" in caplog.text
    assert len(introspection.default_store().query(key="pdf")) == 1
    assert sidecar.read_text("utf-8") == "{corrupt"


def test_a_render_event_names_the_first_omitted_keys_and_counts_them_all():
    from lemon_skills.skills.prompt import RenderedPrompt

    omitted = tuple(f"s{i:05d}" for i in range(10_000))
    rendered = RenderedPrompt("text", ("a",), ("b",), (), (), omitted, 16_000)
    meta = observe.prompt_metadata(rendered, None, "content")
    assert meta["omitted_count"] == 10_000
    assert meta["omitted_keys"] == list(omitted[: observe.OMITTED_KEYS])
    observe.emit("skill.prompt_render", meta)
    [row] = introspection.default_store().query()
    assert len(row.payload["omitted_keys"]) == observe.OMITTED_KEYS < 100
