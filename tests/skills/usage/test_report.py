"""The usage report and the curator read the same rows and the same reviewability rule."""

from __future__ import annotations

from datetime import UTC, datetime

from lemon_skills.skills.curator.plan import Thresholds, plan_curation
from lemon_skills.skills.usage.report import build_report, is_reviewable

NOW = datetime(2026, 5, 1, tzinfo=UTC)
IDLE = "2026-01-01T00:00:00Z"  # 120 days before NOW


def test_a_pinned_flag_keeps_an_active_skill_out_of_both_the_report_and_the_curator():
    records = {
        "pinned-active": {"created_by": "agent", "pinned": True, "last_loaded_at": IDLE},
        "plain": {"created_by": "agent", "last_loaded_at": IDLE},
        "stale": {"created_by": "agent", "lifecycle_state": "stale", "last_loaded_at": IDLE},
    }
    report = {r.name: r for r in build_report(records, now=NOW)}
    plan = plan_curation(records, now=NOW, thresholds=Thresholds(grace_days=1))
    moved = {t.name for t in plan.transitions}
    for name in records:
        flagged = report[name].stale_candidate or report[name].archive_candidate
        assert flagged == (name in moved), name
    assert not report["pinned-active"].stale_candidate
    assert moved == {"plain", "stale"}


def test_is_reviewable_is_agent_authored_unpinned_active_or_stale():
    assert is_reviewable(agent_authored=True, pinned=False, state="active")
    assert is_reviewable(agent_authored=True, pinned=False, state="stale")
    assert not is_reviewable(agent_authored=True, pinned=True, state="active")
    assert not is_reviewable(agent_authored=True, pinned=False, state="archived")
    assert not is_reviewable(agent_authored=True, pinned=False, state="pinned")
    assert not is_reviewable(agent_authored=False, pinned=False, state="active")
