"""How long one request may run: a timeout that every progress notification restarts, up to
an absolute cap.

A long tool that keeps reporting progress is working, not hung, so each
``notifications/progress`` for the request moves its deadline to ``now + timeout``; nothing
moves it past ``start + max_total``. When the deadline passes, the request's await is
cancelled, and the SDK tells the server with ``notifications/cancelled``.
"""

from __future__ import annotations

import inspect
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
    _scope: anyio.CancelScope | None = field(default=None, repr=False)
    _cap: float = 0.0

    def scope(self) -> anyio.CancelScope:
        """A cancel scope for one attempt of the request, expiring at the deadline (re-armed
        on every call). A block it ended early timed out: run it as
        ``with deadline.scope(): return await ...`` and treat falling out of the block as
        ``TimeoutError``; ``reason()`` says which limit it was.

        A plain scope rather than a context manager of our own: this runs on every tool call.
        """
        now = anyio.current_time()
        self._cap = now + max(self.max_total_s, self.timeout_s)
        self._scope = anyio.CancelScope(deadline=now + self.timeout_s)
        return self._scope

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Push the deadline back, then tell the caller's ``on_progress``."""
        if self._scope is not None:
            self._scope.deadline = min(anyio.current_time() + self.timeout_s, self._cap)
        if self.on_progress is not None:
            outcome = self.on_progress(progress, total, message)
            if inspect.isawaitable(outcome):
                await outcome

    def reason(self) -> str:
        """What expired: the per-call timeout, or the absolute cap."""
        if self._cap and anyio.current_time() >= self._cap and self.max_total_s > self.timeout_s:
            return f"ran for the maximum of {self.max_total_s:g} s (max_total_timeout_ms)"
        return f"timed out after {self.timeout_s:g} s"
