"""``lemon mcp serve --http``: the skill server over Streamable HTTP at ``/mcp``, behind the
exposure guard.

Each token of the token file gets its own session manager, so a client's session id is
useless with another token, and a token bound to an agent gets that agent's catalogue (one
``SkillServer`` per agent, shared by its tokens). Without tokens (a loopback bind) there is
one manager.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from lemon_skills.tools.serve.guard import (
    GRANT_KEY,
    Exposure,
    Grant,
    guard,
    run_http,
    transport_security,
)
from lemon_skills.tools.serve.server import Options, SkillServer, serving_process

PATH = "/mcp"


def session_manager(server: Any, exposure: Exposure) -> StreamableHTTPSessionManager:
    """The SDK's Streamable HTTP session manager for ``server`` under ``exposure``'s checks."""
    return StreamableHTTPSessionManager(
        app=server,
        security_settings=transport_security(exposure),
        max_request_body_size=exposure.max_body_bytes,
    )


class GrantRouter:
    """ASGI: ``/mcp`` routed to the session manager of the client's grant (set by ``guard``),
    so a session id is useless with another token; the managers, and ``watchers`` (coroutine
    functions run beside them), live as long as the app's lifespan."""

    def __init__(
        self,
        managers: Mapping[Grant | None, StreamableHTTPSessionManager],
        watchers: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
    ) -> None:
        self.managers = dict(managers)
        self.watchers = tuple(watchers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope.get("path", "").rstrip("/") != PATH:
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
            return
        manager = self.managers.get(scope.get("state", {}).get(GRANT_KEY))
        if manager is None:  # not behind the guard, or a grant it does not know
            await PlainTextResponse("Unauthorized", status_code=401)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with contextlib.AsyncExitStack() as stack:
            for manager in self.managers.values():
                await stack.enter_async_context(manager.run())
            # Entered after the managers, so it is left before them.
            tg = await stack.enter_async_context(anyio.create_task_group())
            for watch in self.watchers:
                tg.start_soon(watch)
            await receive()  # lifespan.startup
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            tg.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})


def skills_app(options: Options, exposure: Exposure) -> GrantRouter:
    """One ``SkillServer`` per agent a token is bound to, one session manager per token."""
    servers: dict[str | None, SkillServer] = {}
    managers: dict[Grant | None, StreamableHTTPSessionManager] = {}
    for grant in exposure.grants or (None,):
        agent = grant.agent if grant is not None and grant.agent else options.agent
        if agent not in servers:
            servers[agent] = SkillServer(replace(options, agent=agent))
        managers[grant] = session_manager(servers[agent].server, exposure)
    return GrantRouter(managers, [server.watch for server in servers.values()])


def http_app(options: Options, exposure: Exposure) -> Any:
    """The guarded ASGI app serving ``options`` on ``exposure``."""
    return guard(skills_app(options, exposure), exposure)


async def serve_http(
    options: Options, exposure: Exposure, on_listening: Callable[[str], None]
) -> None:
    """Serve on ``exposure`` until SIGTERM/SIGINT."""
    serving_process()
    await run_http(http_app(options, exposure), exposure, on_listening=on_listening)
