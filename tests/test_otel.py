"""lemon's OpenTelemetry spans, read back through the SDK's in-memory exporters: what ranking
and prompt rendering report, and that nothing records (or leaks text) without a provider."""

from __future__ import annotations

from typing import Any

import lemon_skills
from lemon_skills.telemetry import otel
from tests.helpers.skills import write_skill

REQUEST = "rotate the secret token for customer 4417"


def _all_attribute_values(rec: Any) -> list[str]:
    return [str(v) for s in rec.spans.get_finished_spans() for v in (s.attributes or {}).values()]


def test_ranking_reports_candidates_chosen_keys_and_never_the_request(
    recorded, project, project_skills
):
    write_skill(project_skills, "secret-rotation", description="Rotate secret tokens safely.")
    write_skill(project_skills, "pdf-tools", description="Read and merge PDF files.")
    found = lemon_skills.find_relevant(REQUEST, cwd=project)
    assert [e.key for e in found] == ["secret-rotation"]
    (span,) = recorded.named("lemon.skills.find")
    assert span.attributes["lemon.skills.candidates"] == 2
    assert list(span.attributes["lemon.skills.chosen"]) == ["secret-rotation"]
    assert span.attributes["lemon.skills.none"] is False
    assert not any("4417" in v or "customer" in v for v in _all_attribute_values(recorded))


def test_an_answer_of_none_is_reported_as_such(recorded, project, project_skills):
    write_skill(project_skills, "pdf-tools", description="Read and merge PDF files.")
    assert lemon_skills.find_relevant("bake sourdough bread", cwd=project) == []
    (span,) = recorded.named("lemon.skills.find")
    assert span.attributes["lemon.skills.none"] is True
    assert list(span.attributes["lemon.skills.chosen"]) == []


def test_prompt_rendering_reports_budget_and_what_it_left_out(recorded, project, project_skills):
    for i in range(30):
        write_skill(project_skills, f"skill-{i:02d}", description=f"Helper number {i} " * 8)
    block = lemon_skills.render_prompt("helper", cwd=project, budget=600)
    (span,) = recorded.named("lemon.prompt.render")
    assert span.attributes["lemon.prompt.budget"] == 600
    assert block.omitted and list(span.attributes["lemon.prompt.omitted"]) == list(block.omitted)
    assert span.attributes["lemon.prompt.chars"] == len(block.text)


def test_nothing_records_without_a_provider(project, project_skills):
    write_skill(project_skills, "secret-rotation", description="Rotate secret tokens safely.")
    with otel.span("lemon.skills.find") as current:
        assert current is otel.QUIET
    assert lemon_skills.find_relevant(REQUEST, cwd=project)


def test_exporters_come_from_the_otel_variables_only():
    assert otel.configure_from_env({}) == []
    assert otel.configure_from_env({"OTEL_TRACES_EXPORTER": "none"}) == []


def test_the_cli_exports_its_spans_where_the_otel_variables_say(project, project_skills):
    import json
    import os
    import subprocess
    import sys

    write_skill(project_skills, "secret-rotation", description="Rotate secret tokens safely.")
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "ci-agent"}
    done = subprocess.run(
        [sys.executable, "-m", "lemon_skills", "skill", "find", REQUEST, "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [r["key"] for r in json.loads(done.stdout)] == ["secret-rotation"]  # stdout untouched
    assert '"name": "lemon.skills.find"' in done.stderr
    assert '"name": "lemon skill find"' in done.stderr
    assert '"service.name": "ci-agent"' in done.stderr
