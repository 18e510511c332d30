"""A 2025-03-26 server publishes no OAuth metadata at all: the client falls back to that
revision's default endpoints at the server's origin, still with PKCE S256."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2

from lemon_skills.mcp.oauth.provider import AuthorizationRequest, build_auth
from lemon_skills.selftest.fixtures.oauth_server import AuthServer
from lemon_skills.selftest.fixtures.protected import Recorder, Stack, mcp_server
from lemon_skills.selftest.fixtures.serve import Served
from tests.mcp.oauth_support import run_echo

AS_PATHS = ("/authorize", "/token", "/register")


class _NoMetadata:
    """One origin serving the MCP endpoint and the AS endpoints, and no ``.well-known``."""

    def __init__(self, mcp: Any, auth: Any) -> None:
        self.mcp, self.auth = mcp, auth

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if path.startswith("/.well-known/"):
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await (self.auth if path in AS_PATHS else self.mcp)(scope, receive, send)


@contextlib.contextmanager
def legacy_stack() -> Iterator[Stack]:
    served = Served().bind()
    auth = AuthServer(issuer=served.url("").rstrip("/"))
    mcp_url = served.url("/mcp")
    recorder = Recorder(mcp_server(auth, mcp_url, [], resource_bound=False).streamable_http_app())
    try:
        served.start(_NoMetadata(recorder, auth.app()))
        yield Stack(mcp_url=mcp_url, auth=auth, resource_requests=recorder.requests)
    finally:
        served.close()


async def _browser(request: AuthorizationRequest) -> dict[str, str]:
    async with httpx2.AsyncClient() as browser:
        consent = await browser.get(request.authorization_url)
    q = parse_qs(urlsplit(consent.headers["location"]).query)
    return {"code": q["code"][0], "state": q["state"][0]}


def test_a_server_without_any_metadata_uses_the_default_endpoints_with_s256():
    with legacy_stack() as stack:
        config = {"flow": "pkce", "redirect_uri": "http://127.0.0.1/callback"}
        auth = build_auth("legacy", stack.mcp_url, config, code_provider=_browser)
        assert run_echo(stack.mcp_url, auth) == ["echo:m0"]
        paths = [r.path for r in stack.auth.requests]
        assert paths == ["/register", "/authorize", "/token"]
        _, authorize, token = stack.auth.requests
        assert authorize.query["code_challenge_method"] == "S256"
        assert token.form["grant_type"] == "authorization_code"
        assert token.form["code_verifier"]
        assert stack.bearers()
