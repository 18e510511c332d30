from __future__ import annotations

from dataclasses import replace

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.skills.curator import control
from lemon_skills.skills.curator.state import load_state, update_state


def test_pause_and_resume_persist_and_keep_the_interval(project):
    paused = control.set_paused(True, "project", project, interval_hours=12)
    assert (paused.paused, paused.interval_hours) == (True, 12)
    resumed = control.set_paused(False, "project", project)
    assert (resumed.paused, resumed.interval_hours) == (False, 12)
    assert load_state("project", project) == resumed


def test_an_interval_below_one_hour_is_refused(project):
    with pytest.raises(ConfigError, match="at least 1"):
        control.set_paused(False, "project", project, interval_hours=0)


def test_status_of_a_fresh_scope_has_no_next_pass_and_no_runs(project):
    current = control.status("project", project)
    data = current.to_dict()
    assert (data["scope"], data["next_pass_at"], data["runs"], data["skills"]) == (
        "project",
        None,
        [],
        [],
    )
    assert "version" not in data


def test_status_says_when_the_next_pass_is_due_unless_paused(project):
    update_state(
        "project",
        project,
        lambda s: replace(s, last_run_at="2026-03-01T00:00:00Z", interval_hours=24),
    )
    assert control.status("project", project).next_pass_at == "2026-03-02T00:00:00Z"
    control.set_paused(True, "project", project)
    assert control.status("project", project).next_pass_at is None
