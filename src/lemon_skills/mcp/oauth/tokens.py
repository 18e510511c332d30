"""The OAuth token cache: what a restarted process needs to resume without any request.

A record holds the access and refresh tokens, the absolute expiry, the token endpoint and the
authorization server's metadata, the client id (and a dynamically registered client), the
granted scope and the resource the tokens are for. It is kept in memory, or in the secrets
store under ``oauth.token_secret`` (keyring, or the 0600 ``secrets.json``) when configured.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

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
