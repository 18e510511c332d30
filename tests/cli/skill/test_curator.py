"""``lemon skill curator status|run|pause|resume|rollback``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lemon_skills.cli import main
from lemon_skills.skills.catalog.enablement import skills_json_path
from lemon_skills.skills.curator.state import load_state
from lemon_skills.skills.usage.store import UsageStore, usage_path
from tests.helpers.curator import standard_library, tree_digest


@pytest.fixture
def library(global_skills: Path) -> Path:
    standard_library(global_skills, usage_path("global"), now=datetime.now(UTC))
    return global_skills


def lemon(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["skill", "curator", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_prints_the_summary_the_changes_and_how_to_undo(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = lemon(capsys, "run")
    assert code == 0
    assert "curator: checked=3 stale=1 archived=1 reactivated=0" in out
    assert "candidates: 1" in out
    assert "moved old: active -> archived" in out
    assert "undo: lemon skill curator rollback " in out
    assert "Pass --prompt to print the agent review prompt." in err


def test_run_json_matches_run_json_on_disk(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = lemon(capsys, "run", "--json")
    assert code == 0
    doc = json.loads(out)
    on_disk = json.loads(Path(doc["report_path"]).read_text(encoding="utf-8"))
    assert (
        doc["counts"]
        == on_disk["counts"]
        == {
            "checked": 3,
            "marked_stale": 1,
            "archived": 1,
            "reactivated": 0,
        }
    )


def test_run_prompt_prints_the_review_prompt_and_candidates(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = lemon(capsys, "run", "--prompt")
    prompt = out.split("--- Curator review prompt ---\n", 1)[1]
    assert prompt.startswith("You are running as Lemon's background skill curator.")
    assert "\n\nScope: global\n\nCandidates:\n- mid state=stale,stale-candidate loads=1" in prompt


def test_dry_run_writes_nothing_and_prints_what_would_change(
    home: Path, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(home)
    code, out, err = lemon(capsys, "run", "--dry-run")
    assert code == 0
    assert "would move old: active -> archived" in out
    assert "would move mid: active -> stale" in out
    assert "nothing was written" in err
    assert tree_digest(home) == before


def test_thresholds_from_the_command_line(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = lemon(
        capsys, "run", "--json", "--stale-after-days", "50", "--archive-after-days", "120"
    )
    doc = json.loads(out)
    assert (doc["archived"], doc["marked_stale"]) == ([], ["old"])


def test_inconsistent_thresholds_are_an_error_with_nothing_written(
    home: Path, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(home)
    code, _, err = lemon(capsys, "run", "--stale-after-days", "60", "--archive-after-days", "10")
    assert code == 1
    assert "archive-after-days (10) must be at least stale-after-days (60)" in err
    assert tree_digest(home) == before
    code, _, err = lemon(capsys, "run", "--stale-after-days", "ten")
    assert code == 2


def test_status_shows_state_and_agent_authored_skills(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = lemon(capsys, "status")
    assert "curator: enabled" in out
    assert "runs: 0" in out
    assert "last run: never" in out
    assert "last summary: (none)" in out
    assert "last run candidates: 0" in out
    assert "pending now: 2" in out
    assert "next pass would move old: active -> archived" in out
    assert "mid" in out and "old" in out and "keep" in out
    assert "mine" not in out
    lemon(capsys, "run")
    code, out, _ = lemon(capsys, "status", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["run_count"] == 1
    assert data["last_run_summary"] == "checked=3 stale=1 archived=1 reactivated=0"
    assert [r["changed"] for r in data["runs"]] == [True]
    assert {s["name"]: s["lifecycle_state"] for s in data["skills"]} == {
        "old": "archived",
        "mid": "stale",
        "keep": "pinned",
    }


def test_pause_and_resume(agent_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lemon(capsys, "pause")[1] == "curator: paused\n"
    assert load_state("global").paused
    assert "curator: paused" in lemon(capsys, "status")[1]
    _, out, _ = lemon(capsys, "resume", "--interval-hours", "24")
    assert out == "curator: resumed (every 24 h)\n"
    state = load_state("global")
    assert not state.paused and state.interval_hours == 24


def test_rollback_restores_the_last_run(library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    usage = usage_path("global")
    before = UsageStore(usage).records()
    lemon(capsys, "run")
    code, out, err = lemon(capsys, "rollback")
    assert code == 0
    assert "restored mid, old" in out
    assert "re-enabled in skills.json: old" in out
    assert "curator paused" in err
    assert UsageStore(usage).records() == before
    assert json.loads(skills_json_path("global").read_text(encoding="utf-8"))["disabled"] == []
    code, _, err = lemon(capsys, "rollback")
    assert code == 1
    assert "error: no global curator run left to roll back" in err


def test_project_scope_uses_the_project_and_local_still_means_project(
    project: Path, project_skills: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standard_library(project_skills, usage_path("project", project), now=datetime.now(UTC))
    code, out, _ = lemon(capsys, "run", "--project", "--cwd", str(project))
    assert code == 0
    assert "undo: lemon skill curator rollback " in out and f"--project --cwd {project}" in out
    assert not (agent_dir / "skills.curator.json").exists()
    assert (project / ".lemon" / "skills.curator.json").exists()
    code, out, _ = lemon(capsys, "rollback", "--local", "--cwd", str(project), "--json")
    assert code == 0
    assert json.loads(out)["restored"] == ["mid", "old"]
