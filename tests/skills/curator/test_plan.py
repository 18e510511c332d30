"""The pure curator planner: which agent-authored skills move, which are held, and why."""

from __future__ import annotations

from typing import Any

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.skills.curator.plan import Thresholds, apply_plan, plan_curation, skill_rows
from lemon_skills.skills.usage.store import iso
from tests.helpers.curator import NOW, days_ago


def rec(
    *,
    loaded: float | None = None,
    created: float | None = 200,
    state: str = "active",
    agent: bool = True,
    pinned: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A sidecar record; times are days before NOW."""
    out: dict[str, Any] = {"lifecycle_state": state, "pinned": pinned, **extra}
    if agent:
        out["created_by"] = "agent"
    if created is not None:
        out["created_at"] = iso(days_ago(created))
    if loaded is not None:
        out["last_loaded_at"] = iso(days_ago(loaded))
        out["load_count"] = 1
    return out


def moves(plan: Any) -> dict[str, tuple[str, str]]:
    return {t.name: (t.from_state, t.to_state) for t in plan.transitions}


def test_reference_scenario_archives_marks_stale_and_skips_pinned_and_user_skills() -> None:
    records = {
        "old": rec(loaded=100),
        "mid": rec(loaded=40),
        "keep": rec(loaded=100, state="pinned", pinned=True),
        "mine": rec(loaded=100, agent=False),
    }
    plan = plan_curation(records, now=NOW)
    assert moves(plan) == {"old": ("active", "archived"), "mid": ("active", "stale")}
    assert plan.counts == {"checked": 3, "marked_stale": 1, "archived": 1, "reactivated": 0}
    assert plan.summary == "checked=3 stale=1 archived=1 reactivated=0"
    assert [r.name for r in plan.candidates] == ["mid"]
    assert plan.review_required


def test_stale_skill_used_again_recently_is_reactivated() -> None:
    plan = plan_curation({"back": rec(loaded=3, state="stale")}, now=NOW)
    assert moves(plan) == {"back": ("stale", "active")}
    assert plan.counts["reactivated"] == 1


def test_stale_skill_still_idle_stays_stale_until_the_archive_threshold() -> None:
    assert moves(plan_curation({"s": rec(loaded=60, state="stale")}, now=NOW)) == {}
    assert moves(plan_curation({"s": rec(loaded=95, state="stale")}, now=NOW)) == {
        "s": ("stale", "archived")
    }


def test_never_used_skill_within_grace_of_its_creation_is_held_even_with_low_thresholds() -> None:
    th = Thresholds(stale_after_days=5, archive_after_days=10, grace_days=30)
    plan = plan_curation({"new": rec(created=20)}, now=NOW, thresholds=th)
    assert moves(plan) == {}
    assert [(h.name, h.reason) for h in plan.held] == [("new", "grace")]


def test_never_used_old_skill_is_marked_stale_first_never_archived_at_once() -> None:
    plan = plan_curation({"unused": rec(created=200)}, now=NOW)
    assert moves(plan) == {"unused": ("active", "stale")}
    assert "never used" in plan.transitions[0].reason


def test_never_used_stale_skill_is_archived_only_after_the_grace_in_stale() -> None:
    recent = rec(created=200, state="stale", state_updated_at=iso(days_ago(10)))
    plan = plan_curation({"unused": recent}, now=NOW)
    assert moves(plan) == {}
    assert plan.held[0].reason == "grace"
    overdue = rec(created=200, state="stale", state_updated_at=iso(days_ago(31)))
    assert moves(plan_curation({"unused": overdue}, now=NOW)) == {"unused": ("stale", "archived")}


def test_archived_and_pinned_skills_never_move_but_are_counted() -> None:
    records = {
        "gone": rec(loaded=1, state="archived"),
        "kept": rec(loaded=400, state="archived", pinned=True),
        "pin": rec(loaded=400, state="pinned", pinned=True),
    }
    plan = plan_curation(records, now=NOW)
    assert plan.transitions == ()
    assert plan.checked == 3
    assert not plan.review_required


def test_user_skills_are_neither_counted_nor_candidates() -> None:
    plan = plan_curation({"mine": rec(loaded=300, agent=False)}, now=NOW)
    assert plan.checked == 0
    assert plan.transitions == ()
    assert plan.candidates == ()


def test_archive_limit_archives_the_most_idle_and_marks_the_rest_stale() -> None:
    records = {"a": rec(loaded=100), "b": rec(loaded=300), "c": rec(loaded=200)}
    plan = plan_curation(records, now=NOW, thresholds=Thresholds(max_archives=1))
    assert moves(plan) == {
        "a": ("active", "stale"),
        "b": ("active", "archived"),
        "c": ("active", "stale"),
    }
    assert sorted((h.name, h.reason) for h in plan.held) == [
        ("a", "archive_limit"),
        ("c", "archive_limit"),
    ]


def test_skill_missing_on_disk_is_held_not_moved() -> None:
    plan = plan_curation({"old": rec(loaded=100)}, now=NOW, present={"other"})
    assert moves(plan) == {}
    assert plan.held[0].reason == "missing"


def test_record_without_any_timestamp_is_held() -> None:
    plan = plan_curation({"odd": rec(created=None)}, now=NOW)
    assert moves(plan) == {}
    assert plan.held[0].reason == "no_activity"


def test_a_curator_move_does_not_count_as_activity() -> None:
    records = {"mid": rec(loaded=40)}
    plan = plan_curation(records, now=NOW)
    after = apply_plan(records, plan.transitions, NOW)
    assert after["mid"]["lifecycle_state"] == "stale"
    assert after["mid"]["state_updated_by"] == "curator"
    [row] = skill_rows(after, now=NOW, thresholds=Thresholds())
    assert row.idle_days == 40
    assert records["mid"]["lifecycle_state"] == "active"  # the input is not mutated


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stale_after_days": 0}, "stale-after-days must be at least 1"),
        ({"stale_after_days": 30, "archive_after_days": 10}, "must be at least stale-after-days"),
        ({"max_archives": -1}, "max-archives"),
    ],
)
def test_invalid_thresholds_are_refused_with_a_precise_message(
    kwargs: dict[str, int], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Thresholds(**kwargs)
