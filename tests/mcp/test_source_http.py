"""Streamable HTTP and legacy SSE servers on 127.0.0.1, through McpSource and connect()."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from lemon_skills.errors import McpConnectError
from lemon_skills.mcp.config.parse import parse_server
from lemon_skills.mcp.session.connect import connect
from lemon_skills.selftest.fixtures import server as smoke_server
from tests.mcp.servers import http500


class RecordHeaders:
    """ASGI middleware keeping the headers of every HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


class StampAuth(httpx2.Auth):
    """Stands in for the OAuth provider: adds a bearer to every request."""

    def auth_flow(self, request: httpx2.Request) -> Any:
        request.headers["Authorization"] = "Bearer stamp"
        yield request


def test_two_http_servers_both_at_mcp_get_distinct_prefixes(make_source, serve):
    one = serve(smoke_server.http_app())
    two = serve(smoke_server.http_app())
    source = make_source([{"url": one.url("/mcp")}, {"url": two.url("/mcp")}])
    echoes = sorted(t.name for t in source.discover_tools() if t.name.endswith("_echo"))
    assert echoes == sorted([f"mcp_localhost_{one.port}_echo", f"mcp_localhost_{two.port}_echo"])
    for name in echoes:
        assert source.call_tool(name, {"message": "x"}).text == "echo:x"
    assert source.naming_conflicts() == []


def test_http_500_only_affects_that_server(make_source, serve, http_fixture):
    bad = serve(http500.app)
    source = make_source(
        [{"name": "bad", "url": bad.url("/mcp")}, {"name": "good", "url": http_fixture.url("/mcp")}]
    )
    names = {t.name for t in source.discover_tools()}
    assert "mcp_good_echo" in names and not any(n.startswith("mcp_bad_") for n in names)
    status = source.status()["servers"]
    assert status["good"]["connected"] and not status["bad"]["connected"]
    assert "500" in status["bad"]["last_error"]
    assert source.call_tool("mcp_good_echo", {"message": "ok"}).text == "echo:ok"


def test_an_unreachable_server_only_affects_itself(make_source, http_fixture):
    source = make_source(
        [
            {"name": "nobody", "url": "http://127.0.0.1:9/mcp"},
            {"name": "good", "url": http_fixture.url("/mcp")},
        ]
    )
    assert "mcp_good_echo" in {t.name for t in source.discover_tools()}
    assert "cannot connect" in source.status()["servers"]["nobody"]["last_error"]


def test_streamable_http_in_both_protocol_eras(make_source, http_fixture):
    source = make_source(
        [
            {"name": "modern", "url": http_fixture.url("/mcp")},
            {"name": "legacy", "url": http_fixture.url("/mcp"), "protocol": "legacy"},
        ]
    )
    source.discover_tools()
    servers = source.status()["servers"]
    assert servers["modern"]["protocol_version"] == "2026-07-28"
    assert servers["legacy"]["protocol_version"] == "2025-11-25"
    assert servers["legacy"]["server_info"] == {"name": "HTTP Fixture", "version": "1.0.0"}
    assert source.call_tool("mcp_legacy_echo", {"message": "l"}).text == "echo:l"


def test_legacy_sse_server_offers_tools_resources_and_prompts(make_source, sse_fixture):
    source = make_source([{"url": sse_fixture.url("/sse")}])
    tools = {t.name for t in source.discover_tools()}
    prefix = f"mcp_localhost_{sse_fixture.port}_"
    assert {prefix + s for s in ("echo", "fail", "resource_read", "prompt_get")} <= tools
    assert source.call_tool(prefix + "echo", {"message": "s"}).text == "echo:s"
    assert source.call_tool(prefix + "fail").is_error
    assert (
        source.call_tool(prefix + "resource_read", {"uri": "fixture://status"}).text == "status:ok"
    )
    status = next(iter(source.status()["servers"].values()))
    assert status["transport"] == "sse"
    assert (status["tool_count"], status["resource_count"], status["prompt_count"]) == (6, 1, 1)


def test_sse_filters_apply(make_source, sse_fixture):
    source = make_source([{"name": "sse", "url": sse_fixture.url("/sse"), "allow_tools": ["echo"]}])
    tools = {t.name for t in source.discover_tools()}
    assert "mcp_sse_echo" in tools and "mcp_sse_fail" not in tools
    assert json.loads(source.call_tool("mcp_sse_resources_list").text)[0]["name"] == "Status"


def test_configured_headers_are_sent_with_variables_expanded(make_source, serve, monkeypatch):
    monkeypatch.setenv("TEST_API_KEY", "k-123")
    recorder = RecordHeaders(smoke_server.http_app())
    served = serve(recorder)
    source = make_source(
        [{"name": "h", "url": served.url("/mcp"), "headers": {"X-Api-Key": "${TEST_API_KEY}"}}]
    )
    assert source.call_tool("mcp_h_echo", {"message": "x"}).text == "echo:x"
    assert recorder.seen and all(h.get("x-api-key") == "k-123" for h in recorder.seen)


@pytest.mark.parametrize("kind", ["http", "sse"])
def test_connect_takes_an_auth_for_http_and_sse(kind, serve):
    app = smoke_server.http_app() if kind == "http" else smoke_server.sse_app()
    recorder = RecordHeaders(app)
    served = serve(recorder)
    cfg = parse_server(
        {"name": "a", "type": kind, "url": served.url("/mcp" if kind == "http" else "/sse")}
    )

    async def main() -> str:
        async with connect(cfg, auth=StampAuth()) as conn:
            result = await conn.client.call_tool("echo", {"message": "auth"})
            return result.content[0].text  # type: ignore[union-attr]

    assert anyio.run(main) == "echo:auth"
    assert all(h.get("authorization") == "Bearer stamp" for h in recorder.seen)


def test_connect_explains_a_missing_variable():
    cfg = parse_server(
        {"name": "a", "url": "http://127.0.0.1:9/mcp", "headers": {"K": "${NOPE_UNSET}"}}
    )

    async def main() -> None:
        async with connect(cfg):
            pass

    with pytest.raises(McpConnectError, match="environment variable NOPE_UNSET is not set"):
        anyio.run(main)


def test_auth_factory_gives_each_http_server_its_auth(make_source, serve):
    recorder = RecordHeaders(smoke_server.http_app())
    served = serve(recorder)
    asked: list[str] = []

    def auth_for(cfg: Any) -> httpx2.Auth | None:
        asked.append(cfg.name)
        return StampAuth() if cfg.name == "secured" else None

    source = make_source([{"name": "secured", "url": served.url("/mcp")}], auth_factory=auth_for)
    assert source.call_tool("mcp_secured_echo", {"message": "a"}).text == "echo:a"
    assert asked == ["secured"]
    assert recorder.seen and all(h.get("authorization") == "Bearer stamp" for h in recorder.seen)
