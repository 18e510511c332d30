"""The curator review prompt and the run report rendering."""

from __future__ import annotations

from datetime import UTC, datetime

from lemon_skills.skills.curator.plan import plan_curation
from lemon_skills.skills.curator.prompt import review_prompt
from lemon_skills.skills.curator.report import render_markdown, run_document, run_id_for, run_order
from lemon_skills.skills.usage.report import ReportRow
from lemon_skills.skills.usage.store import iso
from tests.helpers.curator import NOW, days_ago


def candidates() -> tuple[ReportRow, ...]:
    records = {
        "mid": {
            "created_by": "agent",
            "created_at": iso(days_ago(60)),
            "last_loaded_at": iso(days_ago(40)),
            "load_count": 2,
            "write_count": 1,
        },
        "fresh": {"created_by": "agent", "created_at": iso(days_ago(3)), "write_count": 1},
    }
    return plan_curation(records, now=NOW).candidates


def test_prompt_states_the_goal_the_hard_rules_and_the_change_preference() -> None:
    text = review_prompt("global", candidates())
    assert text.startswith("You are running as Lemon's background skill curator.")
    assert "class-level skills" in text
    assert "Never delete a skill" in text and "skill_manage action=archive" in text
    assert "Skip pinned and archived skills." in text
    assert "not by the usage counters" in text
    patch = text.index("1. Patch an existing class-level skill")
    files = text.index("2. Add or update supporting files")
    umbrella = text.index("3. Create a new umbrella skill only when")
    assert patch < files < umbrella < text.index("4. Avoid creating new narrow skills.")
    assert "references/, templates/, scripts/" in text
    assert "read_skill" in text


def test_prompt_lists_each_candidate_on_one_line() -> None:
    text = review_prompt("project", candidates())
    assert text.split("\n\nScope: project\n\nCandidates:\n")[1].splitlines() == [
        "- mid state=stale,stale-candidate loads=2 writes=1 idle_days=40 "
        "last_activity=2026-03-27T00:00:00Z",
        "- fresh state=active loads=0 writes=1 idle_days=3 last_activity=2026-05-03T00:00:00Z",
    ]


def test_prompt_without_candidates_says_so() -> None:
    assert review_prompt("global", ()).endswith(
        "Candidates:\nNo agent-authored global skills have usage records yet."
    )


def test_run_ids_are_iso_basic_to_the_second_and_sort_in_start_order() -> None:
    assert run_id_for(datetime(2026, 5, 6, 0, 0, 0, 123456, tzinfo=UTC)) == "20260506T000000"
    ids = ["20260506T000000-10", "20260507T000000", "20260506T000000", "20260506T000000-2"]
    assert sorted(ids, key=run_order) == [
        "20260506T000000",
        "20260506T000000-2",
        "20260506T000000-10",
        "20260507T000000",
    ]


def test_report_of_a_run_that_changed_nothing_says_none_and_nothing_to_undo() -> None:
    doc = run_document(
        plan_curation({}, now=NOW),
        run_id="20260506T000000",
        scope="global",
        cwd=None,
        duration_ms=1,
        disabled=[],
        snapshot=False,
    )
    text = render_markdown(doc)
    assert "## State transitions\n\nNone." in text
    assert "## Candidates\n\nNone." in text
    assert "Review required: no" in text
    assert "Nothing was changed, so there is nothing to undo." in text
