"""Why an HTTP server's connection failed, as far as authorization is concerned.

The SDK reports an auth failure as an exception group around whatever the transport saw last;
the provider keeps the precise, token-free reason in ``last_error``, so that one is preferred.
A server that answers 401 although no ``oauth`` is configured is asked (without credentials)
which authorization servers it trusts, so status can say what to configure.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Protocol, runtime_checkable

import anyio
import httpx2

from lemon_skills.errors import McpAuthError, McpAuthRequired, McpError
from lemon_skills.mcp.config.entries import HttpServer, ServerConfig, StdioServer
from lemon_skills.mcp.oauth.metadata import probe as discover_requirement
from lemon_skills.mcp.session.connect import Probe, describe, expand

logger = logging.getLogger(__name__)

#: How long the discovery behind an "authorization required" error may take.
DISCOVERY_TIMEOUT_S = 10.0


@runtime_checkable
class ReportingAuth(Protocol):
    """An ``httpx2.Auth`` that reports its state (``LemonOAuthProvider`` does)."""

    last_error: Any

    def describe(self) -> dict[str, Any]:
        """Token-free state for status."""
        ...


def begin_attempt(auth: object) -> None:
    """Forget the auth error of an earlier attempt."""
    if isinstance(auth, ReportingAuth):
        auth.last_error = None


def auth_status(auth: object) -> dict[str, Any] | None:
    """The auth's own status (no token, only whether one is held), if it reports one."""
    return auth.describe() if isinstance(auth, ReportingAuth) else None


def auth_error(auth: object) -> str | None:
    """The auth's precise reason for the last failure, with its hint."""
    error = auth.last_error if isinstance(auth, ReportingAuth) else None
    return _with_hint(error) if isinstance(error, Exception) else None


def interactive(cfg: ServerConfig, auth: object) -> bool:
    """Whether a new attempt would ask a person to sign in again."""
    settings = getattr(auth, "settings", None)
    return isinstance(cfg, HttpServer) and getattr(settings, "flow", None) == (
        "authorization_code_pkce"
    )


async def authorization_required(cfg: ServerConfig, probe: Probe) -> McpAuthRequired | None:
    """For a server without ``oauth`` that answered 401: what it asks for (None otherwise)."""
    if not isinstance(cfg, HttpServer) or cfg.oauth is not None or probe.http_status != 401:
        return None
    requirement = None
    try:
        env = dict(os.environ)
        headers = {k: expand(v, env) for k, v in cfg.headers.items()}
        with anyio.fail_after(DISCOVERY_TIMEOUT_S):
            requirement = await discover_requirement(expand(cfg.url, env), headers=headers)
    except (McpError, httpx2.HTTPError, TimeoutError, ValueError) as exc:
        logger.info("MCP server %s: OAuth discovery failed: %s", cfg.name, describe(exc))
    return McpAuthRequired(
        server=cfg.name, requirement=requirement.to_dict() if requirement else None
    )


def refused_header(cfg: ServerConfig, probe: Probe) -> McpAuthError | None:
    """For a server that answered 401 to the ``Authorization`` header of its entry: the error
    that says so (asking which authorization server it trusts would miss the point)."""
    if isinstance(cfg, StdioServer) or cfg.oauth is not None or probe.http_status != 401:
        return None
    if not any(k.lower() == "authorization" for k in cfg.headers):
        return None
    return McpAuthError(
        "the server refused the Authorization header of its config entry (HTTP 401)",
        server=cfg.name,
        hint='the token in "headers" may be wrong, expired or revoked: replace it, '
        'or configure "oauth" instead',
    )


class Attempt(Protocol):
    """What ``explain_failure`` reads and records on a server handle's connection attempt."""

    config: ServerConfig
    auth: Any
    auth_required: dict[str, Any] | None
    hold: bool


async def explain_failure(h: Attempt, probe: Probe, *, otherwise: str) -> str:
    """Why ``h``'s connection attempt failed, as far as authorization tells (else
    ``otherwise``); records what a 401 server asks for and holds a failed interactive login."""
    h.auth_required = None
    precise = auth_error(h.auth)
    if precise is not None:
        h.hold = interactive(h.config, h.auth)
        return precise
    refused = refused_header(h.config, probe)
    if refused is not None:
        return _with_hint(refused)
    required = await authorization_required(h.config, probe)
    if required is None:
        return otherwise
    h.auth_required = required.requirement
    return _with_hint(required)


def _with_hint(error: Exception) -> str:
    text = describe(error)
    hint = getattr(error, "hint", None)
    return f"{text}; {hint}" if hint else text
