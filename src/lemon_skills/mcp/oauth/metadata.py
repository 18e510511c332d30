"""What a protected server asks for: its 401 challenge and the metadata documents it points to.

Used when a server answers 401 and no ``oauth`` is configured (so status can say which
authorization servers and scopes are involved), and by the HTTP proof. Every metadata request
is sent from a fresh client with no configured headers and no token: discovery URLs come from
the server and must never receive credentials.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    issuers_match,
)

from lemon_skills.mcp.oauth.guard import UrlGuard

_PROBE = {"jsonrpc": "2.0", "id": "lemon-auth-probe", "method": "ping"}
_MCP_ACCEPT = {"accept": "application/json, text/event-stream"}


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthorizationServerInfo:
    """One advertised authorization server and what its metadata document said."""

    issuer: str
    metadata_url: str | None = None
    metadata: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the metadata fields are public documents)."""
        return {
            "issuer": self.issuer,
            "metadata_url": self.metadata_url,
            "metadata": self.metadata,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthRequirement:
    """A server's OAuth requirement as discovered from its challenge."""

    www_authenticate: str | None
    resource_metadata_url: str | None = None
    resource: str | None = None
    scope: str | None = None
    authorization_servers: tuple[str, ...] = ()
    authorization_server_metadata: tuple[AuthorizationServerInfo, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for status and proofs."""
        return {
            "www_authenticate": self.www_authenticate,
            "resource_metadata_url": self.resource_metadata_url,
            "resource": self.resource,
            "scope": self.scope,
            "authorization_servers": list(self.authorization_servers),
            "authorization_server_metadata": [
                a.to_dict() for a in self.authorization_server_metadata
            ],
        }


async def probe(
    url: str, *, headers: dict[str, str] | None = None, timeout: float = 10.0
) -> AuthRequirement | None:
    """POST a ping to ``url``; None when it is not refused with 401, else the requirement.

    ``headers`` (the server's configured ones) go on the probe only, never on discovery.
    """
    async with httpx2.AsyncClient(timeout=timeout) as http:
        response = await http.post(url, json=_PROBE, headers={**_MCP_ACCEPT, **(headers or {})})
    if response.status_code != 401:
        return None
    return await discover(url, response, timeout=timeout)


async def discover(
    url: str, challenge: httpx2.Response, *, timeout: float = 10.0
) -> AuthRequirement:
    """Follow a 401 ``challenge`` to the protected-resource and authorization-server metadata."""
    www = challenge.headers.get("www-authenticate")
    hinted = extract_resource_metadata_from_www_auth(challenge)
    guard = UrlGuard(url, server=url)
    async with httpx2.AsyncClient(timeout=timeout) as fresh:
        prm_url, prm = await _first_document(
            fresh, guard, build_protected_resource_metadata_discovery_urls(hinted, url)
        )
        servers = _strings(prm.get("authorization_servers")) if prm else ()
        infos = [await _server_info(fresh, guard, issuer, url) for issuer in servers]
    resource = prm.get("resource") if prm else None
    return AuthRequirement(
        www_authenticate=www,
        resource_metadata_url=prm_url or hinted,
        resource=resource if isinstance(resource, str) else None,
        scope=extract_scope_from_www_auth(challenge),
        authorization_servers=servers,
        authorization_server_metadata=tuple(infos),
    )


async def _server_info(
    http: httpx2.AsyncClient, guard: UrlGuard, issuer: str, url: str
) -> AuthorizationServerInfo:
    error = None
    for candidate in build_oauth_authorization_server_metadata_discovery_urls(issuer, url):
        error, doc = await _fetch(http, guard, candidate)
        if doc is None:
            continue
        if not isinstance(doc.get("issuer"), str) or not issuers_match(doc["issuer"], issuer):
            return AuthorizationServerInfo(
                issuer=issuer, metadata_url=candidate, error="invalid_issuer"
            )
        return AuthorizationServerInfo(issuer=issuer, metadata_url=candidate, metadata=doc)
    return AuthorizationServerInfo(issuer=issuer, error=error)


async def _first_document(
    http: httpx2.AsyncClient, guard: UrlGuard, urls: list[str]
) -> tuple[str | None, dict[str, Any] | None]:
    for candidate in urls:
        _, doc = await _fetch(http, guard, candidate)
        if doc is not None:
            return candidate, doc
    return None, None


async def _fetch(
    http: httpx2.AsyncClient, guard: UrlGuard, url: str
) -> tuple[str | None, dict[str, Any] | None]:
    """The JSON object at ``url``, or why there is none (``http_404``, ``refused: ...``)."""
    refused = await guard.reason(url)
    if refused is not None:
        return f"refused: {refused}", None
    try:
        response = await http.send(create_oauth_metadata_request(url))
    except httpx2.HTTPError:
        return "http_0", None
    if response.status_code != 200:
        return f"http_{response.status_code}", None
    try:
        doc = json.loads(response.content)
    except ValueError:
        return "invalid_json", None
    return (None, doc) if isinstance(doc, dict) else ("invalid_json", None)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()
