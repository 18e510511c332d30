"""The OAuth token cache: what a restarted process needs to resume without any request.

A record holds the access and refresh tokens, the absolute expiry, the token endpoint and the
authorization server's metadata, the client id (and a dynamically registered client), the
granted scope and the resource the tokens are for. It is kept in memory, or in the secrets
store under ``oauth.token_secret`` (keyring, or the 0600 ``secrets.json``) when configured.
``fits``, ``restore`` and ``record`` move a record between the cache and the SDK's context.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import ValidationError

from lemon_skills import secrets

logger = logging.getLogger(__name__)

CACHE_VERSION = 1
SECRET_PROVIDER = "mcp_oauth"


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedTokens:
    """One server's tokens and the metadata needed to use and refresh them."""

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    token_endpoint: str | None = None
    issuer: str | None = None
    client_id: str | None = None
    resource: str | None = None
    client_info: Mapping[str, Any] | None = None
    authorization_server_metadata: Mapping[str, Any] | None = None
    protected_resource_metadata: Mapping[str, Any] | None = None
    #: ``DPoP`` for a token bound to the key kept next to it (else a bearer token).
    token_type: str | None = None

    def __repr__(self) -> str:
        # tokens must never reach a log line or an error through repr()
        refresh = "'***'" if self.refresh_token else None
        return (
            f"CachedTokens(access_token='***', refresh_token={refresh}, "
            f"expires_at={self.expires_at!r}, token_endpoint={self.token_endpoint!r}, "
            f"client_id={self.client_id!r}, scope={self.scope!r}, resource={self.resource!r})"
        )

    def to_json(self) -> str:
        """The stored form (``version`` and ``updated_at`` added)."""
        data = {k: v for k, v in asdict(self).items() if v is not None}
        data.update(version=CACHE_VERSION, updated_at=int(time.time() * 1000))
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CachedTokens | None:
        """Parse a stored record; None (and a warning) when it is unusable."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            logger.warning("ignored an OAuth token cache entry that is not JSON")
            return None
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            logger.warning("ignored an OAuth token cache entry without an access token")
            return None
        if data.get("version", CACHE_VERSION) > CACHE_VERSION:
            logger.warning("ignored an OAuth token cache entry written by a newer version")
            return None
        fields = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in fields})


class TokenCache(Protocol):
    """Where a provider keeps its tokens between requests and processes."""

    @property
    def location(self) -> str:
        """Where the cache lives (for status: ``memory`` or the secrets backend and name)."""
        ...

    def load(self) -> CachedTokens | None:
        """The cached record, if any."""
        ...

    def save(self, tokens: CachedTokens) -> None:
        """Replace the cached record."""
        ...


class MemoryTokenCache:
    """Tokens live only as long as this object (no token_secret configured)."""

    location = "memory"

    def __init__(self) -> None:
        self._tokens: CachedTokens | None = None

    def load(self) -> CachedTokens | None:
        return self._tokens

    def save(self, tokens: CachedTokens) -> None:
        self._tokens = tokens


class SecretTokenCache:
    """Tokens persisted in the secrets store under one name."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def location(self) -> str:
        return f"{secrets.backend().name}#{self.name}"

    def load(self) -> CachedTokens | None:
        raw = secrets.get(self.name)
        return CachedTokens.from_json(raw) if raw else None

    def save(self, tokens: CachedTokens) -> None:
        secrets.set(self.name, tokens.to_json(), provider=SECRET_PROVIDER)


def fits(
    cached: CachedTokens, context: OAuthContext, *, client_id: str | None, server: str
) -> bool:
    """Whether a cached record is for this server's resource and the configured client."""
    resource = resource_url_from_server_url(context.server_url)
    if cached.resource and not check_resource_allowed(resource, cached.resource):
        logger.info("MCP server %s: cached OAuth tokens are for another resource", server)
        return False
    if client_id and cached.client_id != client_id:
        logger.info("MCP server %s: cached OAuth tokens are for another client", server)
        return False
    return True


def restore(context: OAuthContext, cached: CachedTokens, *, registered: bool, server: str) -> None:
    """Put a cached record back into the SDK's context, so no metadata or token request is
    needed; ``registered``: the client was registered dynamically (its record is cached)."""
    context.current_tokens = OAuthToken(
        access_token=cached.access_token, refresh_token=cached.refresh_token, scope=cached.scope
    )
    context.token_expiry_time = cached.expires_at
    try:
        if cached.authorization_server_metadata:
            meta = OAuthMetadata.model_validate(cached.authorization_server_metadata)
            context.oauth_metadata = meta
            context.auth_server_url = cached.issuer or str(meta.issuer)
        if cached.protected_resource_metadata:
            context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                cached.protected_resource_metadata
            )
        if registered and cached.client_info:
            context.client_info = OAuthClientInformationFull.model_validate(cached.client_info)
    except ValidationError:
        logger.warning("MCP server %s: ignored unreadable cached OAuth metadata", server)


def record(
    context: OAuthContext, *, token_type: str | None, registered: bool
) -> CachedTokens | None:
    """The record to cache for the context's current tokens (None while it holds none)."""
    tokens = context.current_tokens
    if tokens is None:
        return None
    meta = context.oauth_metadata
    client = context.client_info
    return CachedTokens(
        access_token=tokens.access_token,
        refresh_token=tokens.refresh_token,
        expires_at=context.token_expiry_time,
        scope=tokens.scope,
        token_endpoint=str(meta.token_endpoint) if meta else None,
        issuer=str(meta.issuer) if meta else None,
        client_id=client.client_id if client else None,
        resource=context.get_resource_url(),
        client_info=(
            client.model_dump(mode="json", exclude_none=True)
            if client is not None and registered
            else None
        ),
        authorization_server_metadata=_dump(meta),
        protected_resource_metadata=_dump(context.protected_resource_metadata),
        token_type=token_type,
    )


def _dump(model: OAuthMetadata | ProtectedResourceMetadata | None) -> dict[str, Any] | None:
    return None if model is None else model.model_dump(mode="json", exclude_none=True)
