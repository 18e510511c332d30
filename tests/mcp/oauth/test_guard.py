"""OAuth URLs a server advertises are followed only where that server may send us."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import anyio
import pytest

from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.oauth.guard import UrlGuard, address_zone, literal_zone, refusal
from lemon_skills.mcp.oauth.metadata import probe
from lemon_skills.mcp.oauth.provider import build_auth
from tests.mcp.oauth_support import failure

METADATA_SERVICE = "http://169.254.169.254/latest/meta-data/iam"
CC = {"client_id": "lemon", "client_secret": "secret"}


def hostile_app(*, resource_metadata: str | None = None, issuer: str | None = None) -> Any:
    """An MCP endpoint that answers 401 and points discovery wherever it is told to."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        base = f"http://{scope['server'][0]}:{scope['server'][1]}"
        if scope["path"].startswith("/.well-known/oauth-protected-resource") and issuer:
            body = json.dumps({"resource": base + "/mcp", "authorization_servers": [issuer]})
            await _reply(send, 200, body.encode(), [(b"content-type", b"application/json")])
            return
        challenge = 'Bearer error="invalid_token"'
        if resource_metadata:
            challenge += f', resource_metadata="{resource_metadata}"'
        await _reply(send, 401, b"", [(b"www-authenticate", challenge.encode())])

    return app


async def _reply(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.mark.parametrize(
    ("address", "zone"),
    [
        ("169.254.169.254", "forbidden"),
        ("::ffff:169.254.169.254", "forbidden"),
        ("fe80::1", "forbidden"),
        ("0.0.0.0", "forbidden"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("100.64.0.1", "private"),
        ("fd00::1", "private"),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("93.184.216.34", "public"),
        ("2606:4700::1111", "public"),
    ],
)
def test_addresses_are_placed_in_zones(address, zone):
    assert address_zone(ipaddress.ip_address(address)) == zone


def test_names_are_only_judged_without_resolving_when_they_are_literals_or_localhost():
    assert literal_zone("localhost") == "loopback"
    assert literal_zone("app.localhost") == "loopback"
    assert literal_zone("[::1]") == "loopback"
    assert literal_zone("auth.example.com") is None


@pytest.mark.parametrize(
    ("url", "target", "server", "refused"),
    [
        ("https://auth.example.com/token", "public", "public", None),
        ("http://auth.example.com/token", "public", "public", "must use https"),
        ("https://10.0.0.5/token", "private", "public", "10.0.0.5 is a private address"),
        ("http://127.0.0.1:9/token", "loopback", "public", "127.0.0.1 is a loopback address"),
        ("http://127.0.0.1:9/token", "loopback", "private", "127.0.0.1 is a loopback address"),
        ("http://10.0.0.5/token", "private", "private", None),
        ("http://10.0.0.5/token", "private", "loopback", None),
        ("http://127.0.0.1:9/token", "loopback", "loopback", None),
        (METADATA_SERVICE, "forbidden", "loopback", "link-local or reserved"),
        ("file:///etc/passwd", "public", "loopback", "not an http(s) URL"),
    ],
)
def test_a_server_may_send_us_no_deeper_inside_than_itself(url, target, server, refused):
    reason = refusal(url, target, server)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason


def test_the_host_of_a_configured_issuer_is_trusted():
    guard = UrlGuard("https://93.184.216.34/mcp", server="s", trusted="http://10.0.0.5/idp")
    assert anyio.run(guard.reason, "http://10.0.0.5/idp/token") is None
    reason = anyio.run(guard.reason, "http://10.0.0.6/idp/token")
    assert reason == "10.0.0.6 is a private address and the MCP server is not"


def test_a_token_flow_refuses_a_metadata_url_at_a_link_local_address(serve):
    served = serve(hostile_app(resource_metadata=METADATA_SERVICE))
    url = served.url("/mcp")
    error = failure(url, build_auth("hostile", url, CC), timeout=20)
    assert isinstance(error, McpAuthError)
    assert "169.254.169.254 is a link-local or reserved address" in str(error)
    assert error.hint and "oauth.issuer" in error.hint


def test_a_token_flow_refuses_an_authorization_server_at_a_link_local_address(serve):
    served = serve(hostile_app(issuer="http://169.254.169.254/oauth"))
    url = served.url("/mcp")
    error = failure(url, build_auth("hostile", url, CC), timeout=20)
    assert isinstance(error, McpAuthError)
    assert "169.254.169.254" in str(error)


def test_status_discovery_reports_a_refused_authorization_server(serve):
    served = serve(hostile_app(issuer="http://169.254.169.254/oauth"))
    requirement = anyio.run(lambda: probe(served.url("/mcp")))
    assert requirement is not None
    assert requirement.authorization_servers == ("http://169.254.169.254/oauth",)
    [info] = requirement.authorization_server_metadata
    assert info.metadata is None
    assert info.error == "refused: 169.254.169.254 is a link-local or reserved address"
