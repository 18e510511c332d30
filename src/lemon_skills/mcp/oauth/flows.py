"""The pure parts of the OAuth flows: authorization requests, URL and metadata checks, approvals,
token checks.

Nothing here performs I/O; :mod:`lemon_skills.mcp.oauth.provider` wires these into the SDK provider.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import AuthorizationCodeResult, OAuthMetadata

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.sampling.policy import server_slug

logger = logging.getLogger(__name__)

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthorizationRequest:
    """An authorization-code request as an operator or host sees it (no code verifier)."""

    authorization_url: str
    authorization_endpoint: str
    client_id: str
    redirect_uri: str | None
    scope: str | None
    resource: str | None
    state: str
    code_challenge: str
    code_challenge_method: str

    @classmethod
    def from_url(cls, url: str) -> AuthorizationRequest:
        """Read the request back from the authorization URL the SDK built."""
        parts = urlsplit(url)
        q = {k: v[0] for k, v in parse_qs(parts.query).items()}
        return cls(
            authorization_url=url,
            authorization_endpoint=parts._replace(query="", fragment="").geturl(),
            client_id=q.get("client_id", ""),
            redirect_uri=q.get("redirect_uri"),
            scope=q.get("scope"),
            resource=q.get("resource"),
            state=q.get("state", ""),
            code_challenge=q.get("code_challenge", ""),
            code_challenge_method=q.get("code_challenge_method", ""),
        )

    @property
    def state_hash(self) -> str:
        """First 16 hex of sha256(state): identifies the flow without revealing the state."""
        return hashlib.sha256(self.state.encode()).hexdigest()[:16]


CodeAnswer: TypeAlias = str | Mapping[str, str] | AuthorizationCodeResult
#: A host-supplied way to obtain the code (instead of the loopback listener).
CodeProviderFn: TypeAlias = Callable[[AuthorizationRequest], Awaitable[CodeAnswer]]
#: Told about every authorization request (e.g. to open a browser without a shell).
AuthorizationObserverFn: TypeAlias = Callable[[AuthorizationRequest], Awaitable[None] | None]


def check_authorization_url(url: str, *, server: str | None = None) -> None:
    """Refuse an authorization URL that is not http(s), or plain http off loopback.

    Raises:
        McpAuthError: the URL must not be opened.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not host:
        raise McpAuthError(
            f"refusing authorization URL with scheme {parts.scheme or 'none'!r}: only http(s)",
            server=server,
        )
    if parts.scheme == "http" and host not in _LOOPBACK:
        raise McpAuthError(
            f"refusing plain-http authorization URL on {host}: https is required off loopback",
            server=server,
        )


def code_result(answer: CodeAnswer | None, expected_state: str) -> AuthorizationCodeResult:
    """Normalise what a host code provider returned (a bare code inherits the expected state)."""
    if isinstance(answer, AuthorizationCodeResult):
        return answer
    if isinstance(answer, str) and answer:
        return AuthorizationCodeResult(code=answer, state=expected_state)
    if isinstance(answer, Mapping) and answer.get("code"):
        return AuthorizationCodeResult(
            code=answer["code"], state=answer.get("state"), iss=answer.get("iss")
        )
    raise McpAuthError("the authorization code provider returned no code")


def approval_request(
    server: str, request: AuthorizationRequest, context: ApprovalContext
) -> tuple[str, dict[str, Any], str, ApprovalContext]:
    """Tool name, action payload, rationale and context of an ``mcp_<server>_oauth`` approval.

    The payload carries the authorization URL (which the operator opens) and a hash of the
    state; the code verifier never leaves the SDK provider.
    """
    slug = server_slug(server)
    action = {
        "type": "mcp_oauth_authorization",
        "authorization_url": request.authorization_url,
        "resource": request.resource,
        "client_id": request.client_id,
        "redirect_uri": request.redirect_uri,
        "scope": request.scope,
        "state_hash": request.state_hash,
    }
    rationale = (
        f"MCP OAuth authorization required; resource={request.resource}; "
        f"client={request.client_id}; scope={request.scope or ''}; open the authorization URL, "
        "complete login, then approve once to continue"
    )
    approval_context = ApprovalContext(
        run_id=context.run_id or f"mcp-oauth-{slug}",
        session_key=context.session_key or "agent:mcp:oauth",
        agent_id=context.agent_id,
    )
    return f"mcp_{slug}_oauth", action, rationale, approval_context


def token_problem(
    response: httpx2.Response, scrub: Callable[[str], str], *, dpop: bool = False
) -> str | None:
    """Why a token response is unusable, described without echoing its content.

    ``scrub`` removes known secrets from the authorization server's own error text; ``dpop``:
    the request carried a DPoP proof, so a ``DPoP`` token type is usable too.
    """
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code not in (200, 201):
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            detail = body.get("error_description")
            suffix = f" ({scrub(str(detail))})" if isinstance(detail, str) else ""
            return f"token endpoint refused: {scrub(body['error'])}{suffix}"
        return f"token endpoint answered HTTP {response.status_code}"
    if not isinstance(body, dict):
        return "token endpoint answered something other than a JSON object"
    if not isinstance(body.get("access_token"), str) or not body["access_token"]:
        return "token response has no access_token"
    token_type = body.get("token_type", "Bearer")
    usable = ("bearer", "dpop") if dpop else ("bearer",)
    if not isinstance(token_type, str) or token_type.lower() not in usable:
        return f"token response is not a {' or '.join(usable)} token"
    return None


def check_issuer(wanted: str | None, meta: OAuthMetadata | None, *, server: str) -> None:
    """Refuse an authorization server other than the configured ``oauth.issuer``."""
    if wanted and (meta is None or not issuers_match(str(meta.issuer), wanted)):
        found = str(meta.issuer) if meta else "no authorization server metadata"
        raise McpAuthError(
            f"authorization server is {found}, not the configured oauth.issuer {wanted}",
            server=server,
        )


def require_s256(meta: OAuthMetadata | None, *, discovered: bool, server: str) -> None:
    """Refuse to start an authorization the server's metadata does not offer PKCE S256 for.

    ``discovered``: the server published protected-resource metadata. A 2025-03-26 server
    publishes neither document; that revision's fallback is /authorize, /token and /register
    at the server's origin, and S256 is still sent. A server publishing metadata without S256
    is refused (the 2025-06-18+ rule).
    """
    if meta is None and not discovered:
        logger.info(
            "MCP server %s publishes no OAuth metadata; using the 2025-03-26 default endpoints",
            server,
        )
        return
    methods = (meta.code_challenge_methods_supported or []) if meta else []
    if "S256" not in methods:
        raise McpAuthError(
            "authorization server does not offer PKCE S256 (code_challenge_methods_supported"
            f" = {methods or 'absent'}); refusing to start an authorization",
            server=server,
            hint="MCP authorization requires S256; ask the server operator to enable it",
        )
