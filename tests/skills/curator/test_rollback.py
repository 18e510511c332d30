"""Rolling a curator run back from its snapshot: usage states and skills.json come back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lemon_skills
from lemon_skills.errors import ConfigError, CuratorError
from lemon_skills.skills.catalog.enablement import skills_json_path
from lemon_skills.skills.curator import rollback as curator_rollback
from lemon_skills.skills.curator import run as curator_run
from lemon_skills.skills.curator.state import load_state, run_lock
from lemon_skills.skills.usage.store import UsageStore, usage_path
from tests.helpers.curator import NOW, Clock, days_ago, is_enabled, standard_library, tree_digest


def disabled_list(scope: str = "global", cwd: Path | None = None) -> list[str]:
    data = json.loads(skills_json_path(scope, cwd).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    return list(data["disabled"])


def test_rollback_restores_usage_states_and_skills_json(global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    before = UsageStore(usage).records()
    run = curator_run.run(now=NOW)

    result = curator_rollback.rollback(clock=Clock(days_ago(-1)))

    assert result.run_id == run.run_id
    assert result.restored == ("mid", "old")
    assert result.reenabled == ("old",)
    assert UsageStore(usage).records() == before
    assert disabled_list() == []
    assert is_enabled("old")


def test_rollback_is_recorded_in_the_run_report_and_pauses_the_curator(
    global_skills: Path,
) -> None:
    standard_library(global_skills, usage_path("global"))
    run = curator_run.run(now=NOW)
    assert run.report_path is not None

    curator_rollback.rollback(clock=Clock(days_ago(-1)))

    doc = json.loads(run.report_path.read_text(encoding="utf-8"))
    assert doc["rollback"]["restored"] == ["mid", "old"]
    assert doc["rollback"]["rolled_back_at"] == "2026-05-07T00:00:00Z"
    report = (run.report_path.parent / "REPORT.md").read_text(encoding="utf-8")
    assert "Rolled back at 2026-05-07T00:00:00Z: restored mid, old." in report
    assert load_state("global").paused


def test_rollback_without_pause_leaves_the_curator_running(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    curator_run.run(now=NOW)
    assert not curator_rollback.rollback(pause=False).paused
    assert not load_state("global").paused


def test_usage_recorded_after_the_run_survives_the_rollback(global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    curator_run.run(now=NOW)
    UsageStore(usage, clock=lambda: days_ago(-2)).record_load({"key": "mid", "result": "ok"})

    curator_rollback.rollback()

    mid = UsageStore(usage).records()["mid"]
    assert mid["lifecycle_state"] == "active"
    assert mid["load_count"] == 2
    assert mid["last_loaded_at"] == "2026-05-08T00:00:00Z"


def test_a_skill_moved_since_the_run_is_kept_as_it_is_now(global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    curator_run.run(now=NOW)
    UsageStore(usage).set_state("old", "active")  # the user restored it by hand
    lemon_skills.enable("old")
    lemon_skills.disable("old")  # ...and then disabled it on purpose

    result = curator_rollback.rollback()

    assert result.restored == ("mid",)
    assert result.skipped == (("old", "changed since the run (now active)"),)
    assert disabled_list() == ["old"]


def test_a_skill_the_user_had_disabled_before_the_run_stays_disabled(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    lemon_skills.disable("old")
    curator_run.run(now=NOW)

    result = curator_rollback.rollback()

    assert result.reenabled == ()
    assert disabled_list() == ["old"]
    assert UsageStore(usage_path("global")).records()["old"]["lifecycle_state"] == "active"


def test_default_target_is_the_latest_run_that_changed_something(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    first = curator_run.run(now=NOW)
    curator_run.run(now=days_ago(-1))  # changes nothing, keeps no snapshot

    assert curator_rollback.rollback().run_id == first.run_id
    with pytest.raises(CuratorError, match="no global curator run left to roll back"):
        curator_rollback.rollback()


def test_rolling_back_a_named_run_twice_or_an_unknown_run_is_refused(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    run = curator_run.run(now=NOW)
    noop = curator_run.run(now=days_ago(-1))
    assert run.run_id is not None and noop.run_id is not None

    with pytest.raises(CuratorError, match="changed nothing"):
        curator_rollback.rollback(run_id=noop.run_id)
    curator_rollback.rollback(run_id=run.run_id)
    with pytest.raises(CuratorError, match="already rolled back"):
        curator_rollback.rollback(run_id=run.run_id)
    with pytest.raises(CuratorError, match="no global curator run 'nope'") as info:
        curator_rollback.rollback(run_id="nope")
    assert run.run_id in (info.value.hint or "")


def test_rollback_dry_run_writes_nothing(home: Path, global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    curator_run.run(now=NOW)
    before = tree_digest(home)

    result = curator_rollback.rollback(dry_run=True)

    assert result.dry_run
    assert result.restored == ("mid", "old")
    assert result.reenabled == ("old",)
    assert tree_digest(home) == before


def test_project_rollback_restores_the_project_files(project: Path, project_skills: Path) -> None:
    usage = usage_path("project", project)
    standard_library(project_skills, usage)
    before = UsageStore(usage).records()
    curator_run.run("project", project, now=NOW)
    assert disabled_list("project", project) == ["old"]

    curator_rollback.rollback("project", project)

    assert UsageStore(usage).records() == before
    assert disabled_list("project", project) == []


def test_rollback_waits_for_a_running_pass_of_the_same_scope(global_skills: Path) -> None:
    standard_library(global_skills, usage_path("global"))
    curator_run.run(now=NOW)
    with run_lock("global"), pytest.raises(CuratorError, match="in progress"):
        curator_rollback.rollback(wait=0)


def test_a_corrupt_snapshot_is_reported_and_nothing_is_changed(global_skills: Path) -> None:
    usage = usage_path("global")
    standard_library(global_skills, usage)
    run = curator_run.run(now=NOW)
    assert run.run_dir is not None
    (run.run_dir / "snapshot.json").write_text('{"version": 1}', encoding="utf-8")
    before = usage.read_bytes()

    with pytest.raises(ConfigError, match="not a curator snapshot"):
        curator_rollback.rollback()

    assert usage.read_bytes() == before
    assert disabled_list() == ["old"]
    assert not load_state("global").paused
