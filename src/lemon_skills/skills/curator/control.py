"""The curator facade: status, pause/resume, run and rollback for one scope."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from lemon_skills.errors import ConfigError
from lemon_skills.paths import Scope
from lemon_skills.skills.curator import run as curator_run
from lemon_skills.skills.curator.plan import Hold, Thresholds, Transition
from lemon_skills.skills.curator.rollback import RollbackResult, RunInfo, rollback, runs
from lemon_skills.skills.curator.run import RunResult, run, scope_cwd
from lemon_skills.skills.curator.state import CuratorState, load_state, update_state
from lemon_skills.skills.usage.report import ReportRow
from lemon_skills.skills.usage.store import ClockFn, iso, parse_time, utc_now

__all__ = [
    "CuratorStatus",
    "RollbackResult",
    "RunResult",
    "rollback",
    "run",
    "set_paused",
    "status",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CuratorStatus:
    """The curator's state, agent-authored skills and recent runs of one scope."""

    scope: Scope
    state: CuratorState
    next_pass_at: str | None
    rows: tuple[ReportRow, ...]
    runs: tuple[RunInfo, ...]
    pending: tuple[Transition, ...]
    held: tuple[Hold, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "scope": self.scope,
            **{k: v for k, v in self.state.to_dict().items() if k != "version"},
            "next_pass_at": self.next_pass_at,
            "skills": [r.to_dict() for r in self.rows],
            "pending": [t.to_dict() for t in self.pending],
            "held": [h.to_dict() for h in self.held],
            "runs": [
                {
                    "run_id": r.run_id,
                    "started_at": r.started_at,
                    "summary": r.summary,
                    "changed": r.changed,
                    "rolled_back": r.rolled_back,
                    "path": str(r.path),
                }
                for r in self.runs
            ],
        }


def status(
    scope: Scope = "global",
    cwd: str | os.PathLike[str] | None = None,
    *,
    thresholds: Thresholds | None = None,
    now: datetime | None = None,
    clock: ClockFn = utc_now,
) -> CuratorStatus:
    """The curator's state, the agent-authored skills it looks after and what the next pass
    would change (reads only).

    Raises:
        ConfigError: a state file is corrupt.
    """
    where = scope_cwd(scope, cwd)
    th = thresholds or Thresholds()
    preview = curator_run.preview(scope, where, thresholds=th, now=now or clock())
    state = load_state(scope, where)
    return CuratorStatus(
        scope=scope,
        state=state,
        next_pass_at=_next_pass(state),
        rows=tuple(preview.plan.rows),
        runs=tuple(runs(scope, where)[-5:]),
        pending=preview.plan.transitions,
        held=preview.plan.held,
    )


def set_paused(
    paused: bool,
    scope: Scope = "global",
    cwd: str | os.PathLike[str] | None = None,
    *,
    interval_hours: int | None = None,
) -> CuratorState:
    """Pause or resume automatic passes (and optionally set their interval); return the state.

    Raises:
        ConfigError: ``interval_hours`` is below 1, or the state file is corrupt.
    """
    if interval_hours is not None and interval_hours < 1:
        raise ConfigError("interval-hours must be at least 1")

    def change(s: CuratorState) -> CuratorState:
        return replace(s, paused=paused, interval_hours=interval_hours or s.interval_hours)

    return update_state(scope, scope_cwd(scope, cwd), change)


def _next_pass(state: CuratorState) -> str | None:
    if state.paused:
        return None
    anchor = parse_time(state.last_run_at) or parse_time(state.first_seen_at)
    return None if anchor is None else iso(anchor + timedelta(hours=state.interval_hours))
