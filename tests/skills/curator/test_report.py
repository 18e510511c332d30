from __future__ import annotations

from datetime import datetime, timedelta, timezone

from lemon_skills.skills.curator import report


def test_run_id_is_the_utc_start_to_the_second():
    moment = datetime(2026, 5, 6, 2, 30, 15, tzinfo=timezone(timedelta(hours=2)))
    assert report.run_id_for(moment) == "20260506T003015"


def test_runs_in_the_same_second_sort_in_start_order():
    ids = ["20260506T000000-10", "20260506T000001", "20260506T000000-2", "20260506T000000"]
    assert sorted(ids, key=report.run_order) == [
        "20260506T000000",
        "20260506T000000-2",
        "20260506T000000-10",
        "20260506T000001",
    ]


def _doc(**over):
    doc = {
        "run_id": "20260506T000000",
        "scope": "project",
        "cwd": "/work/p",
        "started_at": "2026-05-06T00:00:00Z",
        "duration_ms": 12,
        "summary": "1 archived",
        "review_required": True,
        "counts": {"checked": 3, "archived": 1},
        "disabled": ["old"],
        "state_transitions": [{"name": "old", "from": "stale", "to": "archived", "reason": "idle"}],
        "held": [],
        "candidates": [
            {
                "name": "big",
                "lifecycle_state": "active",
                "load_count": 0,
                "write_count": 2,
                "idle_days": None,
            }
        ],
        "snapshot": "snapshot.json",
    }
    return doc | over


def test_project_runs_roll_back_in_their_project():
    assert report.rollback_command(_doc()) == (
        "lemon skill curator rollback 20260506T000000 --project --cwd /work/p"
    )
    assert report.rollback_command(_doc(scope="global")) == (
        "lemon skill curator rollback 20260506T000000"
    )


def test_report_md_mirrors_the_run_document():
    text = report.render_markdown(_doc())
    assert "- Checked: 3\n- Marked stale: 0\n- Archived: 1" in text
    assert "- old: stale -> archived (idle; disabled in skills.json)" in text
    assert "- big state=active loads=0 writes=2 idle_days=unknown" in text
    assert "## Held back\n\nNone." in text
    assert "Not submitted." in text
    assert "    lemon skill curator rollback 20260506T000000 --project --cwd /work/p" in text


def test_report_md_records_a_rollback_and_a_run_that_changed_nothing():
    rolled = _doc(
        rollback={
            "rolled_back_at": "t",
            "restored": ["old"],
            "skipped": [{"name": "x", "reason": "edited"}],
        }
    )
    assert "Rolled back at t: restored old.\n- kept x: edited" in report.render_markdown(rolled)
    unchanged = report.render_markdown(_doc(snapshot=None))
    assert "Nothing was changed, so there is nothing to undo." in unchanged
