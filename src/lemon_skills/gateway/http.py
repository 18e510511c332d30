"""Serving the gateway over Streamable HTTP at ``/mcp``, behind the shared exposure guard
(``tools/serve/guard``: bearer tokens, Host and Origin checks, a body cap, no network bind
without tokens). Each client is its session (its token when it keeps none, as a
2026-07-28 client does), and a token bound to an agent gets that agent's profile."""

from __future__ import annotations

import contextlib
import hashlib
import sys
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from lemon_skills.gateway.clients import Clients
from lemon_skills.gateway.server import Gateway, GatewayOptions
from lemon_skills.tools.serve.guard import (
    GRANT_KEY,
    Exposure,
    check_exposure,
    guard,
    run_http,
    transport_security,
)
from lemon_skills.tools.serve.server import serving_process
from lemon_skills.tools.serve.web import PATH


def http_key(ctx: Any) -> tuple[str, str | None]:
    """``(client key, agent)`` of an HTTP request: its session, else its token."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None) or {}
    grant = (scope.get("state") or {}).get(GRANT_KEY)
    agent = getattr(grant, "agent", None)
    token = getattr(grant, "token", None)
    who = "token:" + hashlib.sha256(token.encode()).hexdigest()[:16] if token else "anonymous"
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return (f"{who}/session:{session}" if session else who), agent


class GatewayApp:
    """ASGI: ``/mcp`` routed to the session manager of the client's grant, so a session id
    is useless with another token (as ``lemon mcp serve --http`` does); one gateway, and so
    one set of upstream connections, behind all of them."""

    def __init__(self, gateway: Gateway, exposure: Exposure) -> None:
        security = transport_security(exposure)
        self.managers = {
            grant: StreamableHTTPSessionManager(
                app=gateway.server,
                security_settings=security,
                max_request_body_size=exposure.max_body_bytes,
            )
            for grant in exposure.grants or (None,)
        }

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
            await receive()  # lifespan.startup
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


def app(gateway: Gateway, exposure: Exposure) -> Any:
    """The guarded ASGI app of ``gateway``."""
    return guard(GatewayApp(gateway, exposure), exposure)


async def serve_http(options: GatewayOptions, exposure: Exposure) -> None:
    """Serve until SIGTERM/SIGINT: in-flight calls finish (or are cancelled upstream when the
    grace ends), then every upstream server is stopped.

    Raises:
        InvalidValue: a network bind without tokens.
        ServeError: the port is taken, the host unknown.
    """
    from sse_starlette.sse import AppStatus

    check_exposure(exposure)
    serving_process()
    # A response stream in flight is a call in flight: let it end with its answer (uvicorn's
    # grace bounds the wait) instead of cutting every stream at the signal.
    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
    run = options.secret.deployment() if options.secret is not None else None
    gateway = Gateway(options, Clients(http_key, agent=options.agent, run=run))

    def listening(url: str) -> None:
        print(f"lemon mcp gateway: serving {url}", file=sys.stderr, flush=True)

    async def serve() -> None:
        await run_http(app(gateway, exposure), exposure, on_listening=listening)

    await gateway.run(serve)
