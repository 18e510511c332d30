"""OAuth for Streamable HTTP MCP servers, built on the SDK's ``OAuthClientProvider``.

The SDK does discovery (``WWW-Authenticate`` → protected-resource → authorization-server
metadata, sent without the client's headers or tokens), PKCE S256 with ``state`` and ``iss``
checks, ``resource`` indicators, client registration and proactive refresh. This module fills
its gaps:

- a 401 tries the refresh-token grant first (keeping rotated refresh tokens), and only then
  re-acquires once (client credentials or a new authorization);
- client credentials with ``client_secret_post`` or ``client_secret_basic``;
- PKCE refuses an authorization server that does not offer S256 and any authorization URL that
  is not http(s) (http only on loopback); the login goes through a loopback listener on
  ``redirect_uri`` behind an operator approval carrying the URL (never the verifier);
- a token cache with absolute expiry, token endpoint and metadata, so a restarted process
  resumes without a metadata or token request;
- tokens never appear in errors, logs or status (errors are re-raised as redacted
  :class:`McpAuthError`).

Use :func:`build_auth` and put the result on the ``httpx2.AsyncClient`` of the transport.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthToken,
)
from pydantic import AnyUrl

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ConfigError, McpAuthError
from lemon_skills.mcp.oauth import client, dpop
from lemon_skills.mcp.oauth import tokens as token_cache
from lemon_skills.mcp.oauth.assertions import JWT_BEARER, exchange_for_id_jag, read_token
from lemon_skills.mcp.oauth.client import resolve_client_secret
from lemon_skills.mcp.oauth.flows import (
    AuthorizationObserverFn,
    AuthorizationRequest,
    CodeAnswer,
    CodeProviderFn,
    approval_request,
    check_authorization_url,
    check_issuer,
    code_result,
    require_s256,
    token_problem,
)
from lemon_skills.mcp.oauth.guard import UrlGuard
from lemon_skills.mcp.oauth.listener import CallbackListener
from lemon_skills.mcp.oauth.options import OAuthSettings, loopback_problem, parse_oauth
from lemon_skills.mcp.oauth.tokens import MemoryTokenCache, SecretTokenCache, TokenCache

__all__ = [
    "AuthorizationObserverFn",
    "AuthorizationRequest",
    "CodeProviderFn",
    "LemonOAuthProvider",
    "build_auth",
    "check_authorization_url",
    "resolve_client_secret",
]

logger = logging.getLogger(__name__)


class LemonOAuthProvider(OAuthClientProvider):
    """An ``httpx2.Auth`` for one MCP server; see the module docstring."""

    def __init__(
        self,
        *,
        server: str,
        url: str,
        settings: OAuthSettings,
        cache: TokenCache,
        approvals: ApprovalStore,
        context: ApprovalContext | None = None,
        code_provider: CodeProviderFn | None = None,
        on_authorization: AuthorizationObserverFn | None = None,
    ) -> None:
        metadata = client.metadata(settings)
        super().__init__(
            url,
            metadata,
            _Storage(self),
            redirect_handler=self._on_redirect,
            callback_handler=self._on_callback,
            client_metadata_url=settings.client_metadata_url,
        )
        self.server = server
        self.settings = settings
        self.cache = cache
        self.last_error: McpAuthError | None = None
        self._approvals = approvals
        self._context = context or ApprovalContext()
        self._code_provider = code_provider
        self._on_authorization = on_authorization
        self._listener: CallbackListener | None = None
        self._code_answer: CodeAnswer | None = None
        self._expected_state = ""
        self._fixed_client = client.registered(settings, metadata)
        self._guard = UrlGuard(url, server=server, trusted=settings.issuer)
        # The key is kept with the tokens: a cached bound token is useless without it.
        self._dpop = dpop.Binding(
            settings.dpop,
            settings.dpop_key_secret
            or (f"{settings.token_secret}-dpop" if settings.token_secret else None),
        )

    def describe(self) -> dict[str, Any]:
        """Token state for status output: never a token, only whether one is held."""
        tokens = self.context.current_tokens
        meta = self.context.oauth_metadata
        return {
            "flow": self.settings.flow,
            "client_id": self.context.client_info.client_id if self.context.client_info else None,
            "has_access_token": bool(tokens and tokens.access_token),
            "has_refresh_token": bool(tokens and tokens.refresh_token),
            "dpop_bound": self._dpop.bound,
            "expires_at": self.context.token_expiry_time,
            "scope": tokens.scope if tokens else self.settings.scope,
            "token_endpoint": str(meta.token_endpoint) if meta else None,
            "issuer": str(meta.issuer) if meta else None,
            "cache": self.cache.location,
            "last_error": str(self.last_error) if self.last_error else None,
        }

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        inner = super()._auth_flow(request)
        try:
            outgoing = await inner.__anext__()
            refreshed = False
            while True:
                if outgoing is not request:
                    await self._guard.check(str(outgoing.url))
                await self._prove(outgoing, resource=outgoing is request)
                response = yield outgoing
                await self._dpop.note_offer(outgoing, response)
                if await self._took_nonce(outgoing, response, resource=outgoing is request):
                    response = yield outgoing  # RFC 9449 sections 8 and 9: once, fresh proof
                if (
                    outgoing is request
                    and response.status_code == 401
                    and not refreshed
                    and self._can_refresh()
                ):
                    # The SDK would rediscover and grant afresh; a refresh token is cheaper
                    # and needs no operator when the flow is interactive.
                    refreshed = True
                    refresh = await self._refresh_token()
                    await self._guard.check(str(refresh.url))
                    await self._prove(refresh, resource=False)
                    refresh_response = yield refresh
                    if await self._took_nonce(refresh, refresh_response, resource=False):
                        refresh_response = yield refresh
                    if await self._handle_refresh_response(refresh_response):
                        self._add_auth_header(request)
                        await self._prove(request, resource=True)
                        response = yield request
                outgoing = await inner.asend(response)
        except StopAsyncIteration:
            return
        except McpAuthError as exc:
            self.last_error = exc
            raise
        except (OAuthFlowError, ValueError) as exc:
            error = McpAuthError(self._explain(exc), server=self.server)
            self.last_error = error
            raise error from None
        finally:
            await inner.aclose()

    async def _prove(self, request: httpx2.Request, *, resource: bool) -> None:
        """Sign ``request`` with a fresh DPoP proof when it needs one: a resource request
        presenting a DPoP-bound token, or a token request when DPoP is wanted."""
        if resource:
            tokens = self.context.current_tokens
            if self._dpop.bound and tokens and "authorization" in request.headers:
                await self._dpop.prove_resource(request, tokens.access_token)
        elif self._dpop.wanted() and self._is_token_request(request):
            await self._dpop.prove_token(request)

    async def _took_nonce(
        self, request: httpx2.Request, response: httpx2.Response, *, resource: bool
    ) -> bool:
        """Whether ``response`` asked for a nonce; if so ``request`` carries a fresh proof."""
        side = "resource" if resource else "token"
        if not await self._dpop.take_nonce(request, response, side):
            return False
        await self._prove(request, resource=resource)
        return True

    def _is_token_request(self, request: httpx2.Request) -> bool:
        return request.method == "POST" and dpop.target_uri(str(request.url)) == dpop.target_uri(
            self._get_token_endpoint()
        )

    def _can_refresh(self) -> bool:
        return self.context.can_refresh_token() and self.context.oauth_metadata is not None

    def _explain(self, exc: Exception) -> str:
        text = str(exc)
        if text.startswith("State parameter mismatch"):
            return "authorization response state did not match the request"
        return self._scrub(text.splitlines()[0] if text else type(exc).__name__)

    def _scrub(self, text: str) -> str:
        tokens = self.context.current_tokens
        for value in (
            tokens.access_token if tokens else None,
            tokens.refresh_token if tokens else None,
            self.settings.client_secret,
            self.context.client_info.client_secret if self.context.client_info else None,
        ):
            if value:
                text = text.replace(value, "***")
        return text

    async def _initialize(self) -> None:
        cached = await anyio.to_thread.run_sync(self.cache.load)
        self.context.client_info = self._fixed_client
        client_id = self.settings.client_id
        if cached is not None and token_cache.fits(
            cached, self.context, client_id=client_id, server=self.server
        ):
            registered = self._fixed_client is None
            token_cache.restore(self.context, cached, registered=registered, server=self.server)
            self._dpop.bound = cached.token_type == dpop.SCHEME
        self._initialized = True

    async def _persist(self) -> None:
        token_type = dpop.SCHEME if self._dpop.bound else None
        registered = self._fixed_client is None
        saved = token_cache.record(self.context, token_type=token_type, registered=registered)
        if saved is not None:
            await anyio.to_thread.run_sync(self.cache.save, saved)

    def _select_authorization_server(self, advertised: list[str]) -> str:
        wanted = self.settings.issuer
        return next((s for s in advertised if wanted and issuers_match(s, wanted)), advertised[0])

    async def _perform_authorization(self) -> httpx2.Request:
        if self.settings.scope:
            # The configured scope wins over the SDK's guess from the challenge or metadata.
            self.context.client_metadata.scope = self.settings.scope
        check_issuer(self.settings.issuer, self.context.oauth_metadata, server=self.server)
        if self.settings.flow == "client_credentials":
            return self._token_request({"grant_type": "client_credentials"})
        if self.settings.flow in ("jwt_bearer", "enterprise"):
            assertion = await self._assertion()
            return self._token_request({"grant_type": JWT_BEARER, "assertion": assertion})
        require_s256(
            self.context.oauth_metadata,
            discovered=self.context.protected_resource_metadata is not None,
            server=self.server,
        )
        try:
            with anyio.fail_after(self.settings.authorization_timeout):
                if self._code_provider is not None:
                    return await super()._perform_authorization()
                return await self._authorize_through_listener()
        except TimeoutError:
            raise McpAuthError(
                f"authorization did not complete within {self.settings.authorization_timeout:g}s",
                server=self.server,
                hint="open the authorization URL from the approval, sign in, then approve it",
            ) from None

    async def _authorize_through_listener(self) -> httpx2.Request:
        uris = self.context.client_metadata.redirect_uris
        if not uris:
            raise McpAuthError("oauth.redirect_uri is required for PKCE", server=self.server)
        async with CallbackListener(str(uris[0]), server=self.server) as listener:
            if listener.redirect_uri != str(uris[0]):
                self.context.client_metadata.redirect_uris = [AnyUrl(listener.redirect_uri)]
            self._listener = listener
            try:
                return await super()._perform_authorization()
            finally:
                self._listener = None

    async def _assertion(self) -> str:
        """The jwt-bearer assertion: the workload's JWT, or for the enterprise flow an ID-JAG
        the IdP issues for this server's authorization server in exchange for the ID token."""
        settings = self.settings
        if settings.flow == "jwt_bearer":
            assert settings.assertion is not None
            return await read_token(settings.assertion, what="assertion", server=self.server)
        assert settings.idp is not None
        id_token = await read_token(settings.idp.id_token, what="ID token", server=self.server)
        meta = self.context.oauth_metadata
        audience = str(meta.issuer) if meta else self.context.auth_server_url
        return await exchange_for_id_jag(
            settings.idp,
            id_token=id_token,
            audience=audience or self.context.get_authorization_base_url(self.context.server_url),
            resource=self.context.get_resource_url(),
            scope=self.context.client_metadata.scope,
            server=self.server,
        )

    def _token_request(self, data: dict[str, str]) -> httpx2.Request:
        """A grant at the token endpoint with the client's authentication, resource and scope."""
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        data, headers = self.context.prepare_token_auth(data, headers)
        client = self.context.client_info
        if client is not None and client.token_endpoint_auth_method == "none":
            data["client_id"] = client.client_id  # a public client names itself (RFC 6749 3.2.1)
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = self.context.get_resource_url()
        if self.context.client_metadata.scope:
            data["scope"] = self.context.client_metadata.scope
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)

    async def _on_redirect(self, authorization_url: str) -> None:
        check_authorization_url(authorization_url, server=self.server)
        request = AuthorizationRequest.from_url(authorization_url)
        self._expected_state = request.state
        if self._listener is not None:
            self._listener.expect_state(request.state)
        if self._on_authorization is not None:
            told = self._on_authorization(request)
            if inspect.isawaitable(told):
                await told
        if self._code_provider is not None:
            self._code_answer = await self._code_provider(request)
            return
        if self.settings.authorization_approval:
            await self._approve(request)
        elif self._on_authorization is None:
            logger.warning(
                "MCP server %s needs a sign-in: open %s", self.server, request.authorization_url
            )

    async def _approve(self, request: AuthorizationRequest) -> None:
        tool, action, rationale, context = approval_request(self.server, request, self._context)
        decided = await self._approvals.arequest(
            tool,
            action,
            rationale=rationale,
            context=context,
            timeout=self.settings.authorization_timeout,
        )
        if decided.status == "denied":
            raise McpAuthError("authorization was denied by the operator", server=self.server)
        if not decided.approved:
            raise McpAuthError(f"authorization approval {decided.status}", server=self.server)

    async def _on_callback(self) -> AuthorizationCodeResult:
        if self._code_provider is not None:
            return code_result(self._code_answer, self._expected_state)
        assert self._listener is not None
        result = await self._listener.result()
        return AuthorizationCodeResult(code=result.code, state=result.state, iss=result.iss)

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await response.aread()
        problem = self._token_problem(response)
        if problem:
            raise McpAuthError(problem, server=self.server)
        await super()._handle_token_response(self._dpop.note_binding(response))

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        await response.aread()
        problem = self._token_problem(response)
        if problem is None:
            return await super()._handle_refresh_response(self._dpop.note_binding(response))
        logger.warning("MCP server %s: refresh-token grant failed: %s", self.server, problem)
        self.context.clear_tokens()
        return False

    def _token_problem(self, response: httpx2.Response) -> str | None:
        proven = "DPoP" in response.request.headers
        return token_problem(response, self._scrub, dpop=proven)


class _Storage:
    """The SDK's TokenStorage, forwarding every change to the provider's cache."""

    def __init__(self, provider: LemonOAuthProvider) -> None:
        self._provider = provider

    async def get_tokens(self) -> OAuthToken | None:
        return self._provider.context.current_tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._provider._persist()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._provider.context.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._provider.context.client_info = client_info
        await self._provider._persist()


def build_auth(
    server_name: str,
    url: str,
    oauth: Mapping[str, Any] | OAuthSettings,
    *,
    approvals: ApprovalStore | None = None,
    context: ApprovalContext | None = None,
    code_provider: CodeProviderFn | None = None,
    on_authorization: AuthorizationObserverFn | None = None,
    token_cache: TokenCache | None = None,
) -> LemonOAuthProvider:
    """The ``httpx2.Auth`` for one HTTP server's ``oauth`` config.

    Tokens are cached in memory, or in the secrets store under ``oauth.token_secret`` when set
    (``token_cache`` overrides both). PKCE without a ``code_provider`` uses the loopback
    listener on ``oauth.redirect_uri`` and, unless ``authorization_approval`` is false, an
    ``mcp_<server>_oauth`` approval in ``approvals`` (default: the agent dir's store).

    Raises:
        ConfigError: the oauth config is invalid or a named secret is missing.
    """
    settings = oauth if isinstance(oauth, OAuthSettings) else parse_oauth(oauth)
    settings = resolve_client_secret(settings, server=server_name)
    if urlsplit(url).scheme not in ("http", "https"):
        raise ConfigError(f"invalid HTTP URL: {url}")
    if settings.flow == "authorization_code_pkce" and code_provider is None:
        problem = loopback_problem(settings.redirect_uri or "")
        if problem:
            raise ConfigError(f"oauth.redirect_uri {problem} (server {server_name!r})")
    cache = token_cache or (
        SecretTokenCache(settings.token_secret) if settings.token_secret else MemoryTokenCache()
    )
    return LemonOAuthProvider(
        server=server_name,
        url=url,
        settings=settings,
        cache=cache,
        approvals=approvals or ApprovalStore(),
        context=context,
        code_provider=code_provider,
        on_authorization=on_authorization,
    )
