"""How long one request may run: a timeout that every progress notification restarts, up to
an absolute cap.

A long tool that keeps reporting progress is working, not hung, so each
``notifications/progress`` for the request moves its deadline to ``now + timeout``; nothing
moves it past ``start + max_total``. When the deadline passes, the request's await is
cancelled, and the SDK tells the server with ``notifications/cancelled``.

A ``Timekeeper`` enforces the deadlines of many requests with one task, so a request costs a
plain cancel scope instead of one whose timer is armed and disarmed on every tool call (about
a third of the scope's cost).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

#: ``on_progress(progress, total, message)``: sync, or async (awaited).
OnProgressFn = Callable[[float, "float | None", "str | None"], object]


@dataclass(eq=False)
class Deadline:
    """The deadline of one request; ``progress`` is the SDK's progress callback for it."""

    timeout_s: float
    max_total_s: float
    on_progress: OnProgressFn | None = None
    #: When the current attempt ends unless progress moves it (never earlier than before).
    expires: float = field(default=math.inf, repr=False)
    _scope: anyio.CancelScope | None = field(default=None, repr=False)
    _cap: float = 0.0
    _timed: bool = False

    def scope(self) -> anyio.CancelScope:
        """A cancel scope for one attempt of the request, expiring at the deadline by a timer
        of its own (re-armed on every call). A block it ended early timed out: run it as
        ``with deadline.scope(): return await ...`` and treat falling out of the block as
        ``TimeoutError``; ``reason()`` says which limit it was.

        A plain scope rather than a context manager of our own: this runs on every tool call.
        """
        self._arm()
        self._timed = True
        self._scope = anyio.CancelScope(deadline=self.expires)
        return self._scope

    def _arm(self) -> None:
        now = anyio.current_time()
        self._cap = now + max(self.max_total_s, self.timeout_s)
        self.expires = now + self.timeout_s

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Push the deadline back, then tell the caller's ``on_progress``."""
        if self._scope is not None:
            self.expires = min(anyio.current_time() + self.timeout_s, self._cap)
            if self._timed:
                self._scope.deadline = self.expires
        if self.on_progress is not None:
            outcome = self.on_progress(progress, total, message)
            if inspect.isawaitable(outcome):
                await outcome

    def reason(self) -> str:
        """What expired: the per-call timeout, or the absolute cap."""
        if self._cap and anyio.current_time() >= self._cap and self.max_total_s > self.timeout_s:
            return f"ran for the maximum of {self.max_total_s:g} s (max_total_timeout_ms)"
        return f"timed out after {self.timeout_s:g} s"


class Timekeeper:
    """Ends every watched request whose deadline has passed, from one task (``run``, started
    in a task group that outlives the requests).

    The task sleeps until the earliest deadline it knows of. Requests that start later with
    later deadlines do not wake it, and progress only ever moves a deadline later, so while
    calls keep finishing in time it wakes about once per timeout, finds nothing due and
    sleeps again; only a request due sooner than its wake-up time moves that time.
    """

    def __init__(self) -> None:
        self._live: set[Deadline] = set()
        self._wake_at = math.inf
        self._nap: anyio.CancelScope | None = None
        self._running = False

    def watch(self, deadline: Deadline) -> anyio.CancelScope:
        """The cancel scope for one attempt of the request (as ``Deadline.scope``); pair it
        with ``release`` once the attempt ends, however it ends."""
        if not self._running:
            return deadline.scope()
        deadline._arm()
        deadline._timed = False
        deadline._scope = scope = anyio.CancelScope()
        self._live.add(deadline)
        if deadline.expires < self._wake_at:
            self._wake_at = deadline.expires
            if self._nap is not None:
                self._nap.deadline = deadline.expires
        return scope

    def release(self, deadline: Deadline) -> None:
        """Stop watching ``deadline`` (its attempt ended)."""
        self._live.discard(deadline)

    async def run(self) -> None:
        """Cancel overdue requests until cancelled."""
        self._running = True
        try:
            while True:
                with anyio.CancelScope(deadline=self._wake_at) as self._nap:
                    await anyio.sleep_forever()
                self._nap = None
                self._wake_at = self._expire(anyio.current_time())
        finally:
            self._running = False
            for deadline in self._live:  # their timers take over
                if deadline._scope is not None:
                    deadline._scope.deadline = deadline.expires
                    deadline._timed = True

    def _expire(self, now: float) -> float:
        """Cancel what is due; the earliest deadline still pending."""
        earliest = math.inf
        for deadline in self._live:
            if deadline.expires <= now:
                if deadline._scope is not None:
                    deadline._scope.cancel()
                    deadline.expires = math.inf
            elif deadline.expires < earliest:
                earliest = deadline.expires
        return earliest
