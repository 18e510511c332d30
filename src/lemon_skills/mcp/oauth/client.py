"""Who the OAuth client is: its registration metadata, a client registered beforehand, and
the client secrets read from the secrets store."""

from __future__ import annotations

from dataclasses import replace

from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from lemon_skills import secrets
from lemon_skills.errors import ConfigError
from lemon_skills.mcp.oauth.assertions import JWT_BEARER
from lemon_skills.mcp.oauth.options import OAuthSettings

_GRANT_TYPES: dict[str, list[str]] = {
    "authorization_code_pkce": ["authorization_code", "refresh_token"],
    "client_credentials": ["client_credentials"],
    "jwt_bearer": [JWT_BEARER],
    "enterprise": [JWT_BEARER],
}


def metadata(settings: OAuthSettings) -> OAuthClientMetadata:
    """The client metadata sent at registration and used for every grant."""
    pkce = settings.flow == "authorization_code_pkce"
    # A registered public client authenticates with "none"; a client still to be
    # registered leaves the choice to the authorization server.
    method = settings.token_auth_method if settings.client_secret else None
    if method is None and settings.client_id:
        method = "none"
    return OAuthClientMetadata(
        redirect_uris=[AnyUrl(settings.redirect_uri)] if pkce and settings.redirect_uri else None,
        grant_types=_GRANT_TYPES[settings.flow],
        token_endpoint_auth_method=method,
        scope=settings.scope,
        client_name="lemon-skills",
    )


def registered(
    settings: OAuthSettings, metadata: OAuthClientMetadata
) -> OAuthClientInformationFull | None:
    """The client configured by ``client_id``; None when one is to be registered dynamically."""
    if not settings.client_id:
        return None
    return OAuthClientInformationFull(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        redirect_uris=metadata.redirect_uris,
        grant_types=metadata.grant_types,
        token_endpoint_auth_method=metadata.token_endpoint_auth_method,
        scope=settings.scope,
    )


def resolve_client_secret(settings: OAuthSettings, *, server: str | None = None) -> OAuthSettings:
    """Fill ``client_secret`` (and the IdP's) from the secret named by ``client_secret_secret``
    (or the env).

    Raises:
        ConfigError: a named secret is neither stored nor in the environment.
    """
    if settings.client_secret_secret and not settings.client_secret:
        value = _named_secret(settings.client_secret_secret, "oauth.client_secret_secret", server)
        settings = replace(settings, client_secret=value)
    idp = settings.idp
    if idp is not None and idp.client_secret_secret and not idp.client_secret:
        value = _named_secret(idp.client_secret_secret, "oauth.idp.client_secret_secret", server)
        settings = replace(settings, idp=replace(idp, client_secret=value))
    return settings


def _named_secret(name: str, key: str, server: str | None) -> str:
    value = secrets.get(name, env_fallback=True)
    if not value:
        raise ConfigError(
            f"{key} {name!r} is not set" + (f" (server {server!r})" if server else ""),
            hint="store it with lemon_skills.secrets.set(NAME, VALUE) or export it as NAME",
        )
    return value
