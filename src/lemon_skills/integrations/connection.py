"""One agent's MCP connections: opened once, shared by its runs, closed with it.

``async with connection:`` opens an ``McpSource`` of its own in the caller's event loop; entries
are counted, so concurrent runs may each enter, and the last exit closes it. The source lives
in one task of its own (the holder), because the SDK's sessions must be left in the task that
entered them while a framework may enter in one task and leave in another. Without ``async
with``, ``source`` is a source in its synchronous mode: its sessions run on its private loop,
reached from worker threads by its async methods, so no caller's loop blocks; ``aclose()``
stops it. A source the host passes in is used as it is and never closed here.

Every source made here refuses calls that need approval and were not approved in the
framework's run (``integrations.policy``), so nothing waits on the approvals store.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lemon_skills.mcp.source import McpSource


class Connection:
    """Where one agent's MCP tools come from (see the module docstring)."""

    def __init__(self, cwd: Path, *, source: McpSource | None = None, enabled: bool = True):
        self.cwd = cwd
        self._given = source
        self._enabled = enabled
        self._owned: McpSource | None = None
        self._lazy: McpSource | None = None
        self._users = 0
        self._gate = asyncio.Lock()
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None

    @property
    def source(self) -> McpSource | None:
        """The source to use now (None when MCP is off)."""
        if self._given is not None:
            return self._given
        if self._owned is not None:
            return self._owned
        if not self._enabled:
            return None
        if self._lazy is None:
            self._lazy = self._new()
        return self._lazy

    async def __aenter__(self) -> Connection:
        async with self._gate:
            self._users += 1
            if self._users == 1 and self._given is None and self._enabled:
                try:
                    await self._open()
                except BaseException:
                    self._users -= 1
                    raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._gate:
            self._users -= 1
            if self._users == 0:
                await self._close_owned()

    async def aclose(self) -> None:
        """Stop the servers started without ``async with``."""
        lazy, self._lazy = self._lazy, None
        if lazy is not None:
            await asyncio.to_thread(lazy.close)

    def _new(self) -> McpSource:
        from lemon_skills.mcp.source import McpSource

        return McpSource(cwd=self.cwd, approve_call=_refuse)

    async def _open(self) -> None:
        source = self._new()
        ready, stop = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            try:
                async with source:
                    ready.set()
                    await stop.wait()
            finally:
                ready.set()

        holder = asyncio.get_running_loop().create_task(hold())
        await ready.wait()
        if holder.done():
            holder.result()  # the source failed to open: raise it here
        self._owned, self._stop, self._holder = source, stop, holder

    async def _close_owned(self) -> None:
        holder, stop = self._holder, self._stop
        self._owned = self._holder = self._stop = None
        if holder is not None and stop is not None:
            stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await holder


def _refuse(request: dict[str, Any]) -> bool:
    """The source's approver: a call that needs approval and reaches it was not approved in
    the framework's run (approved ones bypass it), so it is refused, never queued."""
    return False
