from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from lemon_skills.errors import ConfigError, CuratorError
from lemon_skills.skills.curator import state as st

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _iso(moment):
    return moment.isoformat()


def test_wrong_types_fall_back_to_defaults():
    loaded = st.CuratorState.from_dict(
        {"run_count": True, "interval_hours": -4, "paused": "yes", "last_run_at": 5}
    )
    assert loaded == st.CuratorState()


def test_state_round_trips_through_its_document():
    state = st.CuratorState(run_count=3, paused=True, interval_hours=12, last_run_id="r1")
    doc = state.to_dict()
    assert doc["version"] == st.VERSION
    assert st.CuratorState.from_dict(json.loads(json.dumps(doc))) == state


def test_paused_is_never_due():
    paused = st.CuratorState(paused=True, last_run_at=_iso(NOW - timedelta(days=30)))
    assert st.is_due(paused, now=NOW).reason == "paused"


def test_first_pass_is_deferred_until_the_interval_after_first_seen():
    assert st.is_due(st.CuratorState(), now=NOW).reason == "first_run_deferred"
    assert st.is_due(st.CuratorState(), now=NOW, defer_first_run=False).reason == "never_run"
    seen = st.CuratorState(first_seen_at=_iso(NOW - timedelta(hours=1)), interval_hours=24)
    due = st.is_due(seen, now=NOW)
    assert (due.due, due.reason, due.next_at) == (False, "not_due", NOW + timedelta(hours=23))


def test_due_once_the_interval_since_the_last_run_has_passed():
    ran = st.CuratorState(last_run_at=_iso(NOW - timedelta(hours=24)), interval_hours=24)
    assert st.is_due(ran, now=NOW).due
    assert not st.is_due(ran, now=NOW - timedelta(minutes=1)).due
    assert st.is_due(ran, now=NOW - timedelta(hours=1), interval_hours=2).due


def test_update_state_persists_and_keeps_unknown_keys(project):
    path = st.state_path("project", project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "future_key": "kept"}), "utf-8")
    new = st.update_state("project", project, lambda s: replace(s, run_count=s.run_count + 1))
    assert new.run_count == 1
    assert st.load_state("project", project).run_count == 1
    assert json.loads(path.read_text("utf-8"))["future_key"] == "kept"


def test_a_corrupt_state_file_raises_and_is_left_alone(project):
    path = st.state_path("project", project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{nope", "utf-8")
    with pytest.raises(ConfigError):
        st.load_state("project", project)
    assert path.read_text("utf-8") == "{nope"


def test_a_second_run_of_the_same_scope_is_refused(project):
    first = st.run_lock("project", project)
    second = st.run_lock("project", project)
    with first, pytest.raises(CuratorError, match="in progress"), second:
        pass
    with st.run_lock("project", project):
        pass  # released after the first pass
