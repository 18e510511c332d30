"""The ``oauth`` object of an HTTP server entry: parsing and validation (pure).

Keys may be snake_case or kebab-case. ``flow`` is ``client_credentials``,
``authorization_code_pkce`` (alias ``pkce``), ``jwt_bearer`` (RFC 7523: a workload's JWT from
``assertion``) or ``enterprise`` (SEP-990: ``idp.id_token`` exchanged at the enterprise IdP for
an ID-JAG, which is the jwt-bearer assertion); without it, a client secret means client
credentials and a ``redirect_uri`` means PKCE. ``client_secret_secret`` names a secret in the
secrets store (falling back to an environment variable) that supplies ``client_secret``.
``dpop`` (``auto`` by default, ``true``, ``false``) binds tokens to a key pair (RFC 9449).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from lemon_skills.errors import ConfigError

Flow = Literal["client_credentials", "authorization_code_pkce", "jwt_bearer", "enterprise"]
DpopMode = Literal["auto", "on", "off"]
TokenAuthMethod = Literal["client_secret_post", "client_secret_basic", "none"]

DEFAULT_AUTHORIZATION_TIMEOUT_S = 300.0
_FLOWS: dict[str, Flow] = {
    "client_credentials": "client_credentials",
    "authorization_code_pkce": "authorization_code_pkce",
    "pkce": "authorization_code_pkce",
    "jwt_bearer": "jwt_bearer",
    "enterprise": "enterprise",
}
_DPOP: dict[Any, DpopMode] = {
    "auto": "auto",
    True: "on",
    "true": "on",
    False: "off",
    "false": "off",
}
#: Where a token an entry names comes from (exactly one of these keys).
_SOURCE_KEYS = ("file", "command", "secret")
_AUTH_METHODS: dict[str, TokenAuthMethod] = {
    "client_secret_post": "client_secret_post",
    "post": "client_secret_post",
    "client_secret_basic": "client_secret_basic",
    "basic": "client_secret_basic",
    "none": "none",
}
_FALSE = (False, "false", "disabled")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenSource:
    """Where a JWT is read each time one is needed: a file (re-read, so a rotated workload
    token is picked up), a command's standard output, or a named secret (or env variable)."""

    file: str | None = None
    command: tuple[str, ...] | None = None
    secret: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityProvider:
    """The enterprise IdP of the ``enterprise`` flow: where the user's ID token is exchanged
    (RFC 8693) for an identity assertion grant (ID-JAG) for the MCP server's authorization
    server."""

    token_endpoint: str
    id_token: TokenSource
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_secret_secret: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OAuthSettings:
    """One server's OAuth configuration (``client_secret`` already resolved when given)."""

    flow: Flow
    client_id: str | None = None
    client_secret: str | None = None
    client_secret_secret: str | None = None
    token_secret: str | None = None
    redirect_uri: str | None = None
    scope: str | None = None
    token_auth_method: TokenAuthMethod = "client_secret_post"
    authorization_approval: bool = True
    authorization_timeout: float = DEFAULT_AUTHORIZATION_TIMEOUT_S
    issuer: str | None = None
    client_metadata_url: str | None = None
    assertion: TokenSource | None = None
    idp: IdentityProvider | None = None
    dpop: DpopMode = "auto"
    dpop_key_secret: str | None = None

    def __repr__(self) -> str:
        # the client secret must never reach a log line through repr()
        secret = "***" if self.client_secret else None
        return (
            f"OAuthSettings(flow={self.flow!r}, client_id={self.client_id!r}, "
            f"client_secret={secret!r}, token_secret={self.token_secret!r}, "
            f"redirect_uri={self.redirect_uri!r}, scope={self.scope!r})"
        )


def normalise(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Keys in snake_case; None and empty-string values dropped."""
    return {
        str(k).replace("-", "_"): v for k, v in raw.items() if v is not None and v != "" and v != []
    }


def validate_oauth(raw: Any) -> list[str]:
    """Every problem with an ``oauth`` object, in the original's order (empty when valid)."""
    if not isinstance(raw, Mapping):
        return ["oauth must be an object"]
    o = normalise(raw)
    flow = _FLOWS.get(str(o.get("flow", "")).lower()) if "flow" in o else _infer_flow(o)
    errors = [
        f"oauth.{key} must be a non-empty string"
        for key in ("client_id", "client_secret", "client_secret_secret", "token_secret")
        if key in o and not _nonblank(o[key])
    ]
    if flow == "client_credentials" and not (
        "client_id" in o and ("client_secret" in o or "client_secret_secret" in o)
    ):
        errors.append("oauth client credentials need client_id and client_secret")
    if "flow" in o and flow is None:
        errors.append(
            "oauth.flow must be client_credentials, authorization_code_pkce, jwt_bearer"
            " or enterprise"
        )
    if flow == "jwt_bearer":
        errors += _source_problems(o.get("assertion"), "oauth.assertion")
    if flow in ("jwt_bearer", "enterprise") and "client_id" not in o:
        errors.append(f"oauth flow {flow} needs client_id")
    if flow == "enterprise":
        errors += _idp_problems(o.get("idp"))
    if _dpop_mode(o.get("dpop", "auto")) is None:
        errors.append("oauth.dpop must be auto, true or false")
    if "dpop_key_secret" in o and not _nonblank(o["dpop_key_secret"]):
        errors.append("oauth.dpop_key_secret must be a non-empty string")
    if "redirect_uri" in o and not isinstance(o["redirect_uri"], str):
        errors.append("oauth.redirect_uri must be a string")
    if "scope" in o and not isinstance(o["scope"], str):
        errors.append("oauth.scope must be a string")
    scopes = o.get("scopes")
    if scopes is not None and not (
        isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)
    ):
        errors.append("oauth.scopes must be a list of strings")
    timeout = o.get("authorization_timeout_ms")
    if timeout is not None and not (
        isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0
    ):
        errors.append("oauth.authorization_timeout_ms must be a positive integer")
    method = o.get("token_auth_method")
    if method is not None and str(method).lower() not in _AUTH_METHODS:
        errors.append("oauth.token_auth_method must be client_secret_post or client_secret_basic")
    if "issuer" in o and not (isinstance(o["issuer"], str) and _is_http_url(o["issuer"])):
        errors.append("oauth.issuer must be an http(s) URL")
    cimd = o.get("client_metadata_url")
    if cimd is not None and not (isinstance(cimd, str) and urlsplit(cimd).scheme == "https"):
        errors.append("oauth.client_metadata_url must be an https URL")
    if flow is None and "flow" not in o:
        errors.append("oauth needs client_secret (client credentials) or redirect_uri (PKCE)")
    return errors


def parse_oauth(raw: Mapping[str, Any]) -> OAuthSettings:
    """Build :class:`OAuthSettings` from an ``oauth`` object.

    Raises:
        ConfigError: with every problem :func:`validate_oauth` finds.
    """
    errors = validate_oauth(raw)
    if errors:
        raise ConfigError("; ".join(errors))
    o = normalise(raw)
    flow = _FLOWS[str(o["flow"]).lower()] if "flow" in o else _infer_flow(o)
    assert flow is not None
    scope = o.get("scope") or (" ".join(o["scopes"]) if o.get("scopes") else None)
    secret = o.get("client_secret")
    default_method: TokenAuthMethod = (
        "client_secret_post" if secret or "client_secret_secret" in o else "none"
    )
    timeout_ms = o.get("authorization_timeout_ms")
    return OAuthSettings(
        flow=flow,
        client_id=o.get("client_id"),
        client_secret=secret,
        client_secret_secret=o.get("client_secret_secret"),
        token_secret=o.get("token_secret"),
        redirect_uri=o.get("redirect_uri"),
        scope=scope,
        token_auth_method=_AUTH_METHODS[str(o.get("token_auth_method", default_method)).lower()],
        authorization_approval=o.get("authorization_approval", True) not in _FALSE,
        authorization_timeout=timeout_ms / 1000 if timeout_ms else DEFAULT_AUTHORIZATION_TIMEOUT_S,
        issuer=o.get("issuer"),
        client_metadata_url=o.get("client_metadata_url"),
        assertion=_source(o["assertion"]) if "assertion" in o else None,
        idp=_idp(o["idp"]) if "idp" in o else None,
        dpop=_dpop_mode(o.get("dpop", "auto")) or "auto",
        dpop_key_secret=o.get("dpop_key_secret"),
    )


def _dpop_mode(raw: Any) -> DpopMode | None:
    if isinstance(raw, bool):
        return "on" if raw else "off"
    return _DPOP.get(raw) if isinstance(raw, str) else None


def _source_problems(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, Mapping):
        return [f"{where} must be an object with file, command or secret"]
    given = [k for k in _SOURCE_KEYS if raw.get(k) not in (None, "", [])]
    if len(given) != 1:
        return [f"{where} needs exactly one of file, command, secret"]
    value = raw[given[0]]
    if given[0] == "command" and isinstance(value, list):
        return (
            []
            if value and all(isinstance(a, str) for a in value)
            else [f"{where}.command must be a string or a list of strings"]
        )
    return [] if _nonblank(value) else [f"{where}.{given[0]} must be a non-empty string"]


def _idp_problems(raw: Any) -> list[str]:
    if not isinstance(raw, Mapping):
        return ["oauth.idp (the enterprise identity provider) must be an object"]
    idp = normalise(raw)
    errors = []
    if not (isinstance(idp.get("token_endpoint"), str) and _is_http_url(idp["token_endpoint"])):
        errors.append("oauth.idp.token_endpoint must be an http(s) URL")
    errors += _source_problems(idp.get("id_token"), "oauth.idp.id_token")
    return errors + [
        f"oauth.idp.{key} must be a non-empty string"
        for key in ("client_id", "client_secret", "client_secret_secret")
        if key in idp and not _nonblank(idp[key])
    ]


def _source(raw: Mapping[str, Any]) -> TokenSource:
    command = raw.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    return TokenSource(
        file=raw.get("file") or None,
        command=tuple(command) if command else None,
        secret=raw.get("secret") or None,
    )


def _idp(raw: Mapping[str, Any]) -> IdentityProvider:
    idp = normalise(raw)
    return IdentityProvider(
        token_endpoint=idp["token_endpoint"],
        id_token=_source(idp["id_token"]),
        client_id=idp.get("client_id"),
        client_secret=idp.get("client_secret"),
        client_secret_secret=idp.get("client_secret_secret"),
    )


def interactive_login_ms(raw: Mapping[str, Any]) -> int | None:
    """The sign-in time an ``oauth`` object allows when its flow needs a person (PKCE)."""
    if validate_oauth(raw):
        return None
    settings = parse_oauth(raw)
    if settings.flow != "authorization_code_pkce":
        return None
    return round(settings.authorization_timeout * 1000)


def loopback_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be served by the loopback callback listener (None when it can)."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme != "http" or parts.hostname not in _LOOPBACK_HOSTS:
        return "must be http://127.0.0.1:PORT/... or http://localhost:PORT/... for the listener"
    if port is None:
        return "needs an explicit port (use :0 for any free port)"
    return None


def _infer_flow(o: Mapping[str, Any]) -> Flow | None:
    if "idp" in o:
        return "enterprise"
    if "assertion" in o:
        return "jwt_bearer"
    if "client_secret" in o or "client_secret_secret" in o:
        return "client_credentials"
    if "redirect_uri" in o:
        return "authorization_code_pkce"
    return None


def _nonblank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname)
