"""The ``McpSource`` s behind the gateway: one shared by every client, and for entries with
``"share": false`` one per client, started on its first need and stopped when that client
has been idle for ``IDLE_S`` (or with the gateway)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from lemon_skills.gateway.clients import Client
from lemon_skills.mcp.config import resolve
from lemon_skills.mcp.source import McpSource

#: A client's own servers stop after this long without a request from it.
IDLE_S = 600.0
MakeSource = Callable[[list[Any] | None, bool], McpSource]


class Upstreams:
    """``shared``: the source every client uses; ``of(client)``: that client's own."""

    def __init__(self, cwd: Path, servers: list[Any] | None, make: MakeSource) -> None:
        config = resolve.load(cwd, servers=servers)
        self.own = [c for c in config.active() if not c.share]
        self._make = make
        if self.own:
            # Read once: the shared source must not start the per-client servers too.
            self.shared = make([c for c in config.active() if c.share], False)
        else:
            self.shared = make(servers, True)
        self.tg: anyio.abc.TaskGroup | None = None

    async def of(self, client: Client) -> McpSource | None:
        """``client``'s own source (None when every entry is shared)."""
        client.used = anyio.current_time()
        if not self.own or self.tg is None:
            return None
        if client.source is None:
            started = anyio.Event()
            self.tg.start_soon(self._hold, client, started)
            await started.wait()
        source: McpSource | None = client.source
        return source

    async def _hold(self, client: Client, started: anyio.Event) -> None:
        async with self._make(list(self.own), False) as source:
            client.source = source
            started.set()
            while anyio.current_time() - client.used < IDLE_S:
                await anyio.sleep(min(IDLE_S, 60.0))
            client.source = None
