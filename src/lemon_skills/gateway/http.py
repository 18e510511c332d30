"""Serving the gateway over Streamable HTTP at ``/mcp``, behind the shared exposure guard
(``tools/serve/guard``: bearer tokens, Host and Origin checks, a body cap, no network bind
without tokens). Each client is its session (its token when it keeps none, as a
2026-07-28 client does), and a token bound to an agent gets that agent's profile."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

from lemon_skills.gateway.clients import Clients
from lemon_skills.gateway.server import Gateway, GatewayOptions
from lemon_skills.tools.serve.guard import (
    GRANT_KEY,
    Exposure,
    check_exposure,
    guard,
    run_http,
)
from lemon_skills.tools.serve.server import serving_process
from lemon_skills.tools.serve.web import GrantRouter, session_manager


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


def app(gateway: Gateway, exposure: Exposure) -> Any:
    """The guarded ASGI app of ``gateway``: one session manager per token (a session id is
    useless with another token, as with ``lemon mcp serve --http``), one gateway, and so one
    set of upstream connections, behind all of them."""
    managers = {g: session_manager(gateway.server, exposure) for g in exposure.grants or (None,)}
    return guard(GrantRouter(managers), exposure)


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
