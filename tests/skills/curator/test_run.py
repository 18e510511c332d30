"""A real curator pass over real files: transitions, skills.json, reports, state, dry run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lemon_skills
from lemon_skills.errors import ConfigError
from lemon_skills.skills.catalog.enablement import skills_json_path
from lemon_skills.skills.curator import run as curator_run
from lemon_skills.skills.curator.plan import Thresholds
from lemon_skills.skills.curator.state import load_state, state_path
from lemon_skills.skills.usage.store import UsageStore, usage_path
from tests.helpers.curator import (
    NOW,
    agent_skill,
    days_ago,
    is_enabled,
    standard_library,
    tree_digest,
)


def test_reference_run_archives_disables_marks_stale_and_reports_exactly_that(
    agent_dir: Path, global_skills: Path
) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    before = UsageStore(usage).records()

    result = curator_run.run(now=NOW)

    records = UsageStore(usage).records()
    assert records["old"]["lifecycle_state"] == "archived"
    assert records["old"]["archived_at"] == "2026-05-06T00:00:00Z"
    assert records["mid"]["lifecycle_state"] == "stale"
    assert records["keep"] == before["keep"]
    assert records["mine"] == before["mine"]
    disabled = json.loads(skills_json_path("global").read_text(encoding="utf-8"))["disabled"]
    assert disabled == ["old"]
    assert not is_enabled("old")
    assert is_enabled("mid")

    doc = json.loads((agent_dir / "logs/curator/20260506T000000/run.json").read_text("utf-8"))
    assert result.report_path == agent_dir / "logs/curator/20260506T000000/run.json"
    assert doc["counts"] == {"checked": 3, "marked_stale": 1, "archived": 1, "reactivated": 0}
    assert doc["auto_transitions"] == doc["counts"]
    assert doc["summary"] == "checked=3 stale=1 archived=1 reactivated=0"
    assert (doc["archived"], doc["marked_stale"], doc["reactivated"]) == (["old"], ["mid"], [])
    assert [(t["name"], t["from"], t["to"]) for t in doc["state_transitions"]] == [
        ("mid", "active", "stale"),
        ("old", "active", "archived"),
    ]
    assert [c["name"] for c in doc["candidates"]] == ["mid"]
    assert doc["review_required"] is True
    assert doc["candidate_count"] == 1
    assert doc["started_at"] == "2026-05-06T00:00:00Z"
    assert doc["scope"] == "global"
    assert isinstance(doc["duration_ms"], int)

    report = (agent_dir / "logs/curator/20260506T000000/REPORT.md").read_text("utf-8")
    for line in (
        "# Curator run",
        "Summary: checked=3 stale=1 archived=1 reactivated=0",
        "- Checked: 3",
        "- Marked stale: 1",
        "- Archived: 1",
        "- Reactivated: 0",
        "- mid state=stale loads=1 writes=1 idle_days=40",
        "Not submitted.",
        "lemon skill curator rollback 20260506T000000",
    ):
        assert line in report
    assert "- old: active -> archived (" in report
    assert "mine" not in report
    assert "keep" not in report


def test_run_updates_the_state_file(agent_dir: Path, global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    first = curator_run.run(now=NOW)
    second = curator_run.run(now=days_ago(-1))
    state = load_state("global")
    assert state.run_count == 2
    assert state.last_run_at == "2026-05-07T00:00:00Z"
    assert state.last_run_id == second.run_id
    assert state.last_report_path == str(second.report_path)
    assert state.last_run_summary == "checked=3 stale=0 archived=0 reactivated=0"
    assert state.last_candidate_count == 1
    assert first.run_id != second.run_id
    raw = json.loads(state_path("global").read_text(encoding="utf-8"))
    assert raw["version"] == 1
    assert raw["interval_hours"] == 168
    assert raw["paused"] is False


def test_two_runs_in_the_same_second_get_distinct_run_dirs(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    ids = [curator_run.run(now=NOW).run_id for _ in range(3)]
    assert ids == ["20260506T000000", "20260506T000000-2", "20260506T000000-3"]


def test_dry_run_writes_nothing_and_says_what_would_change(home: Path, global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    before = tree_digest(home)

    result = curator_run.run(now=NOW, dry_run=True)

    assert tree_digest(home) == before
    assert result.dry_run and result.report_path is None
    assert result.document["archived"] == ["old"]
    assert result.document["marked_stale"] == ["mid"]
    assert result.document["disabled"] == ["old"]


def test_nothing_is_ever_deleted(home: Path, agent_dir: Path, global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    skills_before = tree_digest(global_skills)
    keys_before = set(UsageStore(usage).records())

    for day in range(0, 400, 50):  # a year of passes, everything ends up archived
        curator_run.run(now=days_ago(-day))

    assert tree_digest(global_skills) == skills_before
    records = UsageStore(usage).records()
    assert set(records) == keys_before
    assert records["mid"]["lifecycle_state"] == "archived"
    assert records["keep"]["lifecycle_state"] == "pinned"
    assert records["mine"]["lifecycle_state"] == "active"


def test_project_scope_uses_the_project_files_only(
    agent_dir: Path, project: Path, project_skills: Path
) -> None:
    usage = usage_path("project", project)
    agent_skill(project_skills, usage, "old", created=days_ago(150), loaded=days_ago(100))

    result = curator_run.run("project", project, now=NOW)

    assert result.report_path == project / ".lemon/logs/curator/20260506T000000/run.json"
    assert json.loads(skills_json_path("project", project).read_text("utf-8"))["disabled"] == [
        "old"
    ]
    assert not skills_json_path("global").exists()
    assert not (agent_dir / "logs").exists()
    assert "--project --cwd" in (result.report_path.parent / "REPORT.md").read_text("utf-8")


def test_a_skill_the_user_disabled_before_the_run_is_not_reported_as_newly_disabled(
    global_skills: Path,
) -> None:
    standard_library(global_skills, usage_path("global"))
    lemon_skills.disable("old")
    result = curator_run.run(now=NOW)
    assert result.document["archived"] == ["old"]
    assert result.document["disabled"] == []


def test_corrupt_skills_json_stops_the_run_before_any_state_changes(global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    before = usage.read_bytes()
    skills_json_path("global").write_text("{not json", encoding="utf-8")

    with pytest.raises(ConfigError, match="corrupt JSON"):
        curator_run.run(now=NOW)

    assert usage.read_bytes() == before
    assert load_state("global").run_count == 0


def test_run_with_no_usage_records_writes_a_report_and_creates_no_sidecar(agent_dir: Path) -> None:
    result = curator_run.run(now=NOW)
    assert result.document["counts"]["checked"] == 0
    assert result.document["snapshot"] is None
    assert not usage_path("global").exists()
    assert "No agent-authored global skills have usage records yet." in result.review_prompt


def test_review_submission_is_recorded_in_run_json_and_report(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    result = curator_run.run(now=NOW)
    assert result.report_path is not None
    curator_run.record_review_submission(
        result.report_path,
        {
            "run_id": "host-42",
            "submitted_at": "2026-05-06T00:00:01Z",
            "status": "submitted",
            "error": None,
        },
    )
    doc = json.loads(result.report_path.read_text("utf-8"))
    assert doc["review_submission"] == {
        "run_id": "host-42",
        "submitted_at": "2026-05-06T00:00:01Z",
        "status": "submitted",
    }
    report = (result.report_path.parent / "REPORT.md").read_text("utf-8")
    assert "- Run id: host-42" in report
    assert "- Status: submitted" in report
    assert "Not submitted." not in report


def test_recording_a_submission_for_a_missing_run_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        curator_run.record_review_submission(tmp_path / "nope" / "run.json", {"status": "x"})


def test_custom_thresholds_are_applied_and_recorded(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    th = Thresholds(stale_after_days=50, archive_after_days=120)
    result = curator_run.run(now=NOW, thresholds=th)
    assert result.document["archived"] == []
    assert result.document["marked_stale"] == ["old"]
    assert result.document["thresholds"]["archive_after_days"] == 120


def test_stale_skill_used_again_is_reactivated_by_the_next_pass(global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    curator_run.run(now=NOW)
    UsageStore(usage, clock=lambda: days_ago(-3)).record_load({"key": "mid", "result": "ok"})

    result = curator_run.run(now=days_ago(-7))

    assert UsageStore(usage).records()["mid"]["lifecycle_state"] == "active"
    assert result.document["reactivated"] == ["mid"]
    assert result.document["counts"]["reactivated"] == 1
    assert "- mid: stale -> active (used again 4 days ago" in (
        result.report_path.parent / "REPORT.md"  # type: ignore[union-attr]
    ).read_text("utf-8")


def test_never_used_agent_skill_gets_a_grace_period_from_its_creation(global_skills: Path) -> None:
    usage = usage_path("global")
    agent_skill(global_skills, usage, "fresh", created=days_ago(10))
    agent_skill(global_skills, usage, "unused", created=days_ago(200))
    th = Thresholds(stale_after_days=5, archive_after_days=8)

    result = curator_run.run(now=NOW, thresholds=th)

    records = UsageStore(usage).records()
    assert records["fresh"]["lifecycle_state"] == "active"
    assert records["unused"]["lifecycle_state"] == "stale"  # never archived straight away
    assert [(h["name"], h["reason"]) for h in result.document["held"]] == [("fresh", "grace")]
    assert result.document["archived"] == []
    report = (result.report_path.parent / "REPORT.md").read_text("utf-8")  # type: ignore[union-attr]
    assert "- fresh (active): grace: never used, created 10 days ago (30-day grace)" in report
