"""The curator state file ``skills.curator.json`` and the gates that read it.

One file per scope (``<agent>/skills.curator.json``, ``<cwd>/.lemon/skills.curator.json``):
last run, run count, summary, candidate count, ``last_report_path``, ``paused``,
``interval_hours`` and ``first_seen_at`` (when a background manager first saw this scope; the
first automatic pass waits one full interval from then). Every change is one locked
read-modify-write. ``run_lock`` keeps two passes (or a pass and a rollback) of one scope from
interleaving, across threads and processes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from filelock import FileLock, Timeout

from lemon_skills import _fs
from lemon_skills.errors import CuratorError
from lemon_skills.paths import Scope, scope_root
from lemon_skills.skills.usage.store import as_text, parse_time

VERSION: Final = 1
FILE_NAME: Final = "skills.curator.json"
DEFAULT_INTERVAL_HOURS: Final = 168
DEFAULT_MIN_IDLE_HOURS: Final = 2


def state_path(scope: Scope, cwd: Path | None = None) -> Path:
    """The state file of a scope."""
    return scope_root(scope, cwd) / FILE_NAME


def reports_root(scope: Scope, cwd: Path | None = None) -> Path:
    """The directory holding one sub-directory per run (``logs/curator``)."""
    return scope_root(scope, cwd) / "logs" / "curator"


@dataclass(frozen=True, slots=True, kw_only=True)
class CuratorState:
    """The normalised content of ``skills.curator.json``."""

    last_run_at: str | None = None
    last_run_id: str | None = None
    last_run_summary: str | None = None
    last_report_path: str | None = None
    last_candidate_count: int = 0
    run_count: int = 0
    paused: bool = False
    interval_hours: int = DEFAULT_INTERVAL_HOURS
    first_seen_at: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CuratorState:
        """Normalise a loaded document; wrong types fall back to the defaults."""
        interval = _count(data.get("interval_hours"))
        return cls(
            last_run_at=as_text(data.get("last_run_at")),
            last_run_id=as_text(data.get("last_run_id")),
            last_run_summary=as_text(data.get("last_run_summary")),
            last_report_path=as_text(data.get("last_report_path")),
            last_candidate_count=_count(data.get("last_candidate_count")),
            run_count=_count(data.get("run_count")),
            paused=data.get("paused") is True,
            interval_hours=interval if interval > 0 else DEFAULT_INTERVAL_HOURS,
            first_seen_at=as_text(data.get("first_seen_at")),
        )

    def to_dict(self) -> dict[str, Any]:
        """The document written to disk (with ``version``)."""
        return {"version": VERSION, **{f: getattr(self, f) for f in self.__dataclass_fields__}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Due:
    """Whether an automatic pass may start now, and why (not)."""

    due: bool
    reason: str
    next_at: datetime | None = None


def load_state(scope: Scope, cwd: Path | None = None) -> CuratorState:
    """Read the state of a scope (defaults when the file does not exist).

    Raises:
        ConfigError: the file is corrupt (it is left untouched).
    """
    return CuratorState.from_dict(_fs.read_json(state_path(scope, cwd), default=_empty))


def update_state(
    scope: Scope, cwd: Path | None, change: Callable[[CuratorState], CuratorState]
) -> CuratorState:
    """Apply ``change`` under the file lock and return the new state."""
    out = CuratorState()

    def apply(data: dict[str, Any]) -> dict[str, Any]:
        nonlocal out
        out = change(CuratorState.from_dict(data))
        return {**data, **out.to_dict()}

    _fs.update_json(state_path(scope, cwd), apply, default=_empty)
    return out


def is_due(
    state: CuratorState,
    *,
    now: datetime,
    interval_hours: int | None = None,
    defer_first_run: bool = True,
) -> Due:
    """The pause and interval gates (pure). The interval counts from the last run, or from
    ``first_seen_at`` before any run; with neither, the first pass is deferred."""
    if state.paused:
        return Due(due=False, reason="paused")
    hours = interval_hours or state.interval_hours
    anchor = parse_time(state.last_run_at)
    if anchor is None and defer_first_run:
        anchor = parse_time(state.first_seen_at)
        if anchor is None:
            return Due(due=False, reason="first_run_deferred")
    if anchor is None:
        return Due(due=True, reason="never_run")
    elapsed_hours = (now - anchor).total_seconds() // 3600
    next_at = anchor + timedelta(hours=hours)
    if elapsed_hours < hours:
        return Due(due=False, reason="not_due", next_at=next_at)
    return Due(due=True, reason="interval_elapsed", next_at=next_at)


@contextlib.contextmanager
def run_lock(scope: Scope, cwd: Path | None = None, *, wait: float = 0.0) -> Iterator[None]:
    """Hold the scope's curator run lock.

    Raises:
        CuratorError: another pass or rollback of this scope holds it for longer than ``wait``.
    """
    path = scope_root(scope, cwd) / "skills.curator.run.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        raise CuratorError(
            f"another curator run of the {scope} scope is in progress",
            hint=f"wait for it to finish (lock: {path})",
        ) from None
    try:
        yield
    finally:
        lock.release()


def _empty() -> dict[str, Any]:
    return CuratorState().to_dict()


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
