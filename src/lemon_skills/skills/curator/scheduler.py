"""The background curator: run the curator pass when the host is idle and the interval is due.

``CuratorManager(router, config)`` ticks (every 60 s by default) on its own thread. A tick
starts a pass only when the manager is enabled, no pass is running, the host ``Router`` has
reported no active session for ``min_idle_hours``, the curator is not paused and
``interval_hours`` have passed since the last run. The very first pass of a scope waits one
full interval from when a manager first saw it. After a pass that leaves agent-authored
candidates, the review prompt is submitted through ``router.submit`` with a learning-only tool
policy, and the submission is recorded in the run's report. Tests drive ``tick()`` directly
with an injected clock.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from lemon_skills.errors import ConfigError, CuratorError
from lemon_skills.paths import Scope
from lemon_skills.skills.curator.plan import DEFAULT_GRACE_DAYS, Thresholds
from lemon_skills.skills.curator.prompt import LEARNING_TOOLS
from lemon_skills.skills.curator.run import (
    RunResult,
    record_review_submission,
    run_locked,
    scope_cwd,
)
from lemon_skills.skills.curator.state import (
    DEFAULT_MIN_IDLE_HOURS,
    Due,
    is_due,
    load_state,
    run_lock,
    update_state,
)
from lemon_skills.skills.usage.store import (
    DEFAULT_ARCHIVE_DAYS,
    DEFAULT_STALE_DAYS,
    ClockFn,
    iso,
    utc_now,
)

log = logging.getLogger(__name__)

DEFAULT_TICK_SECONDS: Final = 60.0
#: A background pass archives at most this many skills; the rest wait for later passes.
DEFAULT_MAX_ARCHIVES: Final = 20


class Router(Protocol):
    """What the manager needs from the host agent platform."""

    def list_active_sessions(self) -> Sequence[object]:
        """The sessions running now (empty when the host is idle)."""
        ...

    def submit(self, request: ReviewRequest) -> str | None:
        """Start an agent run for ``request``; return the host's run id if it has one."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewRequest:
    """The review run the manager asks the host to start."""

    run_id: str
    agent_id: str
    session_key: str
    prompt: str
    tool_policy: Mapping[str, Any]
    meta: Mapping[str, Any]
    origin: str = "skill_curator"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True, kw_only=True)
class CuratorConfig:
    """Background curator settings (``from_mapping`` reads a host's config section)."""

    enabled: bool = True
    scope: Scope = "global"
    cwd: Path | None = None
    interval_hours: int | None = None
    min_idle_hours: float = DEFAULT_MIN_IDLE_HOURS
    tick_seconds: float = DEFAULT_TICK_SECONDS
    stale_after_days: int = DEFAULT_STALE_DAYS
    archive_after_days: int = DEFAULT_ARCHIVE_DAYS
    grace_days: int = DEFAULT_GRACE_DAYS
    max_archives: int | None = DEFAULT_MAX_ARCHIVES
    agent_id: str = "default"
    session_key: str | None = None
    tool_policy: Mapping[str, Any] | None = None
    defer_first_run: bool = True

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> CuratorConfig:
        """Build from string keys; unknown keys are an error, not silently ignored.

        Raises:
            ConfigError: an unknown key.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown curator setting(s): {', '.join(unknown)}")
        values = dict(data)
        if isinstance(values.get("cwd"), str):
            values["cwd"] = Path(values["cwd"])
        return cls(**values)

    @property
    def target_session(self) -> str:
        """Where the review goes: ``session_key`` or ``agent:<agent_id>:main``."""
        return self.session_key or f"agent:{self.agent_id}:main"

    @property
    def policy(self) -> Mapping[str, Any]:
        """The review's tool policy (default: the learning-only tools)."""
        return self.tool_policy or {"allow": list(LEARNING_TOOLS)}

    def thresholds(self) -> Thresholds:
        """The planner thresholds."""
        return Thresholds(
            stale_after_days=self.stale_after_days,
            archive_after_days=self.archive_after_days,
            grace_days=self.grace_days,
            max_archives=self.max_archives,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TickResult:
    """Whether a tick started a pass, and why (not)."""

    started: bool
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PassResult:
    """The outcome of one background pass."""

    status: Literal["ran", "skipped", "failed"]
    reason: str
    run: RunResult | None = None
    submission: Mapping[str, Any] | None = field(default=None)


PassFn = Callable[[], PassResult]


class CuratorManager:
    """Run curator passes in the background when the host is idle and a pass is due."""

    def __init__(
        self,
        router: Router,
        config: CuratorConfig | None = None,
        *,
        clock: ClockFn = utc_now,
        run_pass: PassFn | None = None,
    ) -> None:
        self.router = router
        self.config = config or CuratorConfig()
        self.config.thresholds()  # fail at construction, not on the first due tick
        self._clock = clock
        self._run_pass = run_pass or self.run_once
        self._last_busy: datetime = clock()
        self._guard = threading.Lock()
        self._worker: threading.Thread | None = None
        self._loop: threading.Thread | None = None
        self._stop = threading.Event()
        self.last_pass: PassResult | None = None

    @property
    def running(self) -> bool:
        """True while a pass is in progress."""
        worker = self._worker
        return worker is not None and worker.is_alive()

    def tick(self) -> TickResult:
        """Check every gate once and start a pass on a worker thread when all pass."""
        if not self.config.enabled:
            return TickResult(started=False, reason="disabled")
        with self._guard:
            if self._stop.is_set():
                return TickResult(started=False, reason="stopped")
            if self.running:
                return TickResult(started=False, reason="running")
            now = self._clock()
            busy = self._busy_reason(now)
            if busy is not None:
                return TickResult(started=False, reason=busy)
            due = self._due(now)
            if not due.due:
                return TickResult(started=False, reason=due.reason)
            self._worker = threading.Thread(
                target=self._work, name="lemon-curator-pass", daemon=True
            )
            self._worker.start()
        return TickResult(started=True, reason=due.reason)

    def wait(self, timeout: float | None = None) -> PassResult | None:
        """Wait for the running pass (if any) and return the latest pass result."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return self.last_pass

    def run_once(self) -> PassResult:
        """One pass: take the scope's run lock, re-check the gates, run, submit the review."""
        cfg = self.config
        where = scope_cwd(cfg.scope, cfg.cwd)
        try:
            with run_lock(cfg.scope, where, wait=0):
                now = self._clock()
                due = self._gate(now)
                if not due.due:
                    return PassResult(status="skipped", reason=due.reason)
                result = run_locked(cfg.scope, where, thresholds=cfg.thresholds(), now=now)
                if cfg.interval_hours:
                    hours = cfg.interval_hours
                    update_state(cfg.scope, where, lambda s: replace(s, interval_hours=hours))
        except CuratorError:  # only the lock raises it: another pass of this scope is running
            return PassResult(status="skipped", reason="busy")
        if not result.plan.review_required:
            return PassResult(status="ran", reason="no_review_required", run=result)
        submission = self._submit(result)
        return PassResult(
            status="ran", reason=submission["status"], run=result, submission=submission
        )

    def start(self) -> None:
        """Start ticking on a daemon thread every ``tick_seconds``."""
        if self._loop is not None and self._loop.is_alive():
            return
        self._stop.clear()
        self._loop = threading.Thread(target=self._ticks, name="lemon-curator", daemon=True)
        self._loop.start()

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop ticking and wait for a running pass; return True when everything stopped."""
        self._stop.set()
        for attr in ("_loop", "_worker"):  # the loop first: its last tick may start a worker
            thread: threading.Thread | None = getattr(self, attr)
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
        return not any(t is not None and t.is_alive() for t in (self._loop, self._worker))

    def __enter__(self) -> CuratorManager:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _ticks(self) -> None:
        while not self._stop.wait(self.config.tick_seconds):
            try:
                self.tick()
            except Exception:  # the ticking thread must survive a bad tick (corrupt state file)
                log.exception("curator tick failed")

    def _work(self) -> None:
        try:
            result = self._run_pass()
        except Exception as exc:  # a failed pass is recorded, never kills the manager
            log.exception("curator pass failed")
            result = PassResult(status="failed", reason=str(exc))
        self.last_pass = result

    def _busy_reason(self, now: datetime) -> str | None:
        try:
            sessions = self.router.list_active_sessions()
        except Exception:  # the host's router is foreign code; when it fails, assume busy
            log.exception("router.list_active_sessions failed; treating the host as busy")
            self._last_busy = now
            return "router_error"
        if sessions:
            self._last_busy = now
            return "busy"
        idle_hours = (now - self._last_busy).total_seconds() / 3600
        return None if idle_hours >= self.config.min_idle_hours else "not_idle"

    def _due(self, now: datetime) -> Due:
        cfg = self.config
        where = scope_cwd(cfg.scope, cfg.cwd)
        state = load_state(cfg.scope, where)
        if cfg.defer_first_run and state.last_run_at is None and state.first_seen_at is None:
            update_state(
                cfg.scope, where, lambda s: replace(s, first_seen_at=s.first_seen_at or iso(now))
            )
            return Due(due=False, reason="first_run_deferred")
        return self._gate(now)

    def _gate(self, now: datetime) -> Due:
        cfg = self.config
        state = load_state(cfg.scope, scope_cwd(cfg.scope, cfg.cwd))
        return is_due(
            state, now=now, interval_hours=cfg.interval_hours, defer_first_run=cfg.defer_first_run
        )

    def _submit(self, result: RunResult) -> dict[str, Any]:
        cfg = self.config
        request = ReviewRequest(
            run_id=uuid.uuid4().hex,
            agent_id=cfg.agent_id,
            session_key=cfg.target_session,
            prompt=result.review_prompt,
            tool_policy=cfg.policy,
            meta={
                "skill_curator": True,
                "skill_curator_run_id": result.run_id,
                "skill_curator_started_at": result.document["started_at"],
                "skill_curator_summary": result.plan.summary,
                "skill_curator_candidate_count": len(result.plan.candidates),
                "skill_curator_report_path": str(result.report_path),
            },
        )
        submission: dict[str, Any] = {
            "request_id": request.run_id,
            "session_key": request.session_key,
            "agent_id": request.agent_id,
        }
        try:
            host_run = self.router.submit(request)
            submission.update(run_id=host_run or request.run_id, status="submitted")
        except Exception as exc:  # the host's router is foreign code; record its failure
            log.exception("router.submit failed")
            submission.update(run_id=request.run_id, status="failed", error=str(exc))
        submission["submitted_at"] = iso(self._clock())
        if result.report_path is not None:
            record_review_submission(result.report_path, submission)
        return submission
