"""Why conformance 0.1.16's ``auth/2025-03-26-oauth-metadata-backcompat`` cannot pass.

That scenario's mock serves its authorization server metadata at the origin root
(``/.well-known/oauth-authorization-server``) but names the issuer ``<origin>/oauth``. RFC 8414
section 3.3 and SEP-2468 make the client refuse metadata whose issuer is not the one the
well-known URL was built from, so registration, authorization and token requests never happen.
These tests build that exact shape and show the refusal (ours and the SDK's own client alike),
and that the same server with a matching issuer is used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from starlette.responses import JSONResponse

from lemon_skills.mcp.oauth.provider import AuthorizationRequest, build_auth
from lemon_skills.selftest.fixtures.oauth_server import AuthServer
from lemon_skills.selftest.fixtures.protected import Recorder, Stack, mcp_server
from lemon_skills.selftest.fixtures.serve import Served
from tests.mcp.oauth_support import failure, run_echo

ROOT_METADATA = "/.well-known/oauth-authorization-server"


class _RootMetadata:
    """The harness's server: no protected-resource metadata, AS metadata at the origin root."""

    def __init__(self, mcp: Any, auth: AuthServer, advertised: str) -> None:
        self.mcp, self.auth, self.advertised = mcp, auth, advertised
        self.auth_app = auth.app()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if path == ROOT_METADATA:
            doc = {**self.auth.metadata(), "issuer": self.advertised}
            await JSONResponse(doc)(scope, receive, send)
        elif path.startswith("/.well-known/"):
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
        elif path.startswith("/oauth/"):
            await self.auth_app(scope, receive, send)
        else:
            await self.mcp(scope, receive, send)


@contextlib.contextmanager
def backcompat_stack(*, matching_issuer: bool) -> Iterator[Stack]:
    served = Served().bind()
    origin = served.url("").rstrip("/")
    auth = AuthServer(issuer=f"{origin}/oauth")
    mcp_url = served.url("/mcp")
    recorder = Recorder(mcp_server(auth, mcp_url, [], resource_bound=False).streamable_http_app())
    advertised = origin if matching_issuer else f"{origin}/oauth"
    try:
        served.start(_RootMetadata(recorder, auth, advertised))
        yield Stack(mcp_url=mcp_url, auth=auth, resource_requests=recorder.requests)
    finally:
        served.close()


async def _browser(request: AuthorizationRequest) -> dict[str, str]:
    async with httpx2.AsyncClient() as browser:
        consent = await browser.get(request.authorization_url)
    q = parse_qs(urlsplit(consent.headers["location"]).query)
    return {"code": q["code"][0], "state": q["state"][0]}


def _pkce() -> dict[str, str]:
    return {"flow": "pkce", "redirect_uri": "http://127.0.0.1/callback"}


def test_the_harness_issuer_is_refused_before_any_registration_or_token_request():
    with backcompat_stack(matching_issuer=False) as stack:
        auth = build_auth("backcompat", stack.mcp_url, _pkce(), code_provider=_browser)
        error = failure(stack.mcp_url, auth)
        assert "issuer" in str(error).lower()
        assert [r.path for r in stack.auth.requests] == []  # the checks the scenario counts
        assert not stack.bearers()


def test_the_sdk_client_refuses_the_harness_issuer_too():
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    class _Memory:
        async def get_tokens(self) -> None:
            return None

        async def set_tokens(self, tokens: Any) -> None:
            pass

        async def get_client_info(self) -> None:
            return None

        async def set_client_info(self, info: Any) -> None:
            pass

    async def redirect(url: str) -> None:
        raise AssertionError(f"the SDK client went on to authorize at {url}")

    async def callback() -> tuple[str, str | None]:
        raise AssertionError("the SDK client waited for a callback")

    with backcompat_stack(matching_issuer=False) as stack:
        provider = OAuthClientProvider(
            server_url=stack.mcp_url,
            client_metadata=OAuthClientMetadata(
                redirect_uris=["http://127.0.0.1/callback"],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
            ),
            storage=_Memory(),  # type: ignore[arg-type]
            redirect_handler=redirect,
            callback_handler=callback,
        )
        error = failure(stack.mcp_url, provider)
        assert "issuer" in str(error).lower()
        assert [r.path for r in stack.auth.requests] == []


def test_the_same_server_with_a_matching_issuer_is_authorized():
    with backcompat_stack(matching_issuer=True) as stack:
        auth = build_auth("backcompat", stack.mcp_url, _pkce(), code_provider=_browser)
        assert run_echo(stack.mcp_url, auth) == ["echo:m0"]
        assert [r.path for r in stack.auth.requests] == [
            "/oauth/register",
            "/oauth/authorize",
            "/oauth/token",
        ]
