"""The smoke checks every transport shares: the client checks against a fixture server, the
``McpSource`` and registry checks, and the fixture entries for stdio and SSE."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import anyio

from lemon_skills.errors import McpConnectError
from lemon_skills.mcp.config.entries import ServerConfig
from lemon_skills.mcp.config.parse import parse_server
from lemon_skills.mcp.session.connect import connect
from lemon_skills.mcp.source import McpSource
from lemon_skills.selftest.fixtures.server import TITLES
from lemon_skills.selftest.proof import Proof, expect, expect_raises
from lemon_skills.tools.registry import ToolRegistry

UTILITY_SUFFIXES = ("resources_list", "resource_read", "prompts_list", "prompt_get")


MakeConfig = Callable[..., ServerConfig]


@contextmanager
def fixture_entries(kind: str) -> Iterator[MakeConfig]:
    """Yield a factory of entries for the smoke fixture: the stdio command, or a freshly served
    HTTP or SSE app per entry (stopped when the block ends)."""
    if kind == "stdio":

        def make_stdio(name: str, **extra: Any) -> ServerConfig:
            entry = {"name": name, "command": sys.executable, "args": ["-m", _FIXTURE_MODULE]}
            return parse_server({**entry, **extra})

        yield make_stdio
        return
    from lemon_skills.selftest.fixtures import server
    from lemon_skills.selftest.fixtures.serve import Served

    served: list[AbstractContextManager[Any]] = []

    def make_url(name: str, **extra: Any) -> ServerConfig:
        app = Served(server.sse_app() if kind == "sse" else server.http_app()).__enter__()
        served.append(app)
        url = app.url("/sse" if kind == "sse" else "/mcp")
        return parse_server({"name": name, "type": kind, "url": url, **extra})

    try:
        yield make_url
    finally:
        for app in served:
            app.__exit__(None, None, None)


_FIXTURE_MODULE = "lemon_skills.selftest.fixtures.server"


def degraded(make: MakeConfig) -> None:
    missing = parse_server({"name": "missing", "command": "definitely-not-a-real-mcp-server"})
    with McpSource([missing, make("stdio")], include_config=False) as source:
        names = {t.name for t in source.discover_tools()}
        status = source.status()["servers"]
    expect("mcp_stdio_echo" in names, "the healthy server lost its tools")
    expect(not status["missing"]["connected"], "the missing command reported connected")
    expect("not found" in (status["missing"]["last_error"] or ""), "no reason for the failure")


def client_checks(proof: Proof, kind: str, cfg: ServerConfig) -> None:
    """Checks on one direct session (initialize, list/read/get, call success and error)."""
    data: dict[str, Any] = {}

    async def session() -> None:
        async with connect(cfg, ready_timeout=15) as conn:
            c = conn.client
            data["info"] = c.server_info.name if c.server_info else None
            data["tools"] = {t.name for t in (await c.list_tools()).tools}
            data["resources"] = {r.uri for r in (await c.list_resources()).resources}
            read = await c.read_resource("fixture://status")
            data["read"] = [(x.uri, getattr(x, "text", None)) for x in read.contents]
            data["prompts"] = {p.name for p in (await c.list_prompts()).prompts}
            prompt = await c.get_prompt("brief", {"topic": "smoke"})
            data["prompt"] = (prompt.description, [m.role for m in prompt.messages])
            for key, tool, args in (("ok", "echo", {"message": "ok"}), ("bad", "fail", {})):
                r = await c.call_tool(tool, args)
                data[key] = (r.is_error, [getattr(b, "text", None) for b in r.content])

    def want(key: str, wanted: Any) -> Callable[[], None]:
        def check() -> None:
            if key not in data:
                raise McpConnectError("the fixture session did not complete")
            got = data[key]
            ok = wanted <= got if isinstance(wanted, set) else got == wanted
            expect(ok, f"unexpected {key}")

        return check

    def initializes() -> None:
        anyio.run(session)
        want("info", TITLES[kind])()

    checks = {
        "lists_tools": want("tools", {"echo", "fail"}),
        "lists_resources": want("resources", {"fixture://status"}),
        "reads_resource": want("read", [("fixture://status", "status:ok")]),
        "lists_prompts": want("prompts", {"brief"}),
        "gets_prompt": want("prompt", ("Write a brief", ["user"])),
        "calls_tool_success": want("ok", (False, ["echo:ok"])),
        "calls_tool_error": want("bad", (True, ["planned failure"])),
    }
    # The original's order: stdio lists everything before calling; HTTP and SSE call first.
    order = list(checks)
    if kind != "stdio":
        order = order[:1] + order[5:] + order[1:5]
    proof.check(f"mcp_{kind}_client_initializes", initializes)
    for name in order:
        proof.check(f"mcp_{kind}_{name}", checks[name])


def source_checks(proof: Proof, kind: str, make: MakeConfig, *, server: str) -> None:
    """Discovery, calls, utilities, registry, status and filters through ``McpSource``."""
    prefix = f"mcp_{server}_"
    with McpSource([make(server)], include_config=False) as source:
        proof.check(
            f"mcp_source_discovers_prefixed_{kind}_tools", lambda: _discovers(source, prefix)
        )
        if kind != "stdio":
            proof.check(
                f"mcp_source_invokes_{kind}_tool",
                lambda: expect(
                    source.call_tool(prefix + "echo", {"message": "ok"}).text == "echo:ok",
                    "unexpected echo",
                ),
            )
        utilities = "resource_and_prompt" if kind == "stdio" else f"{kind}_resource_and_prompt"
        proof.check(f"mcp_source_invokes_{utilities}_utilities", lambda: _utilities(source, prefix))
        proof.check(
            f"mcp_registry_exposes_prefixed_{kind}_tools", lambda: _registry(source, prefix)
        )
        if kind != "stdio":
            proof.check(f"mcp_source_status_reports_{kind}_capabilities", lambda: _status(source))
    proof.check(f"mcp_source_applies_{kind}_filters", lambda: _filters(make, kind, server))


def _discovers(source: McpSource, prefix: str) -> None:
    names = {t.name for t in source.discover_tools()}
    wanted = {prefix + s for s in ("echo", "fail", *UTILITY_SUFFIXES)}
    expect(wanted <= names, f"missing {sorted(wanted - names)}")


def _utilities(source: McpSource, prefix: str) -> None:
    expect(len(json.loads(source.call_tool(prefix + "resources_list").text)) == 1, "resources_list")
    read = source.call_tool(prefix + "resource_read", {"uri": "fixture://status"})
    expect("status:ok" in read.text, "resource_read")
    expect(len(json.loads(source.call_tool(prefix + "prompts_list").text)) == 1, "prompts_list")
    got = json.loads(
        source.call_tool(prefix + "prompt_get", {"name": "brief", "arguments": {"topic": "t"}}).text
    )
    expect([m["role"] for m in got["messages"]] == ["user"], "prompt_get")


def _registry(source: McpSource, prefix: str) -> None:
    registry = ToolRegistry(mcp_source=source)
    expect(any(t.name == prefix + "echo" for t in registry.get_tools()), "echo not in registry")
    expect(registry.conflict_report().mcp_count >= 6, "mcp_count below 6")


def _status(source: McpSource) -> None:
    servers = list(source.status()["servers"].values())
    caps = {"tools": True, "resources": True, "prompts": True}
    expect(
        any(
            s["connected"]
            and s["tool_count"] == 6
            and s["resource_count"] == 1
            and s["prompt_count"] == 1
            and s["capabilities"] == caps
            for s in servers
        ),
        "no connected server with 6 tools, 1 resource, 1 prompt and all capabilities",
    )


def _filters(make: MakeConfig, kind: str, server: str) -> None:
    prefix = f"mcp_{server}_"
    extra: dict[str, Any] = {"allow_tools": ["echo"]}
    if kind == "stdio":
        extra |= {"block_resources": ["fixture://status"], "block_prompts": ["brief"]}
    with McpSource([make(server, **extra)], include_config=False) as source:
        names = {t.name for t in source.discover_tools()}
        expect(prefix + "echo" in names and prefix + "fail" not in names, "tool filter not applied")
        if kind != "stdio":
            return
        # Every resource and prompt is blocked: utilities that could only refuse are not offered.
        utilities = {prefix + s for s in UTILITY_SUFFIXES}
        expect(not utilities & names, f"utilities offered: {sorted(utilities & names)}")
        expect_raises(
            lambda: source.call_tool(prefix + "resource_read", {"uri": "fixture://status"}),
            "unknown MCP tool",
        )
        expect_raises(
            lambda: source.call_tool(prefix + "prompt_get", {"name": "brief"}), "unknown MCP tool"
        )


def initialized_notification() -> None:
    """Raw JSON-RPC: initialize, then the spec's ``notifications/initialized``, then a request."""
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "1"},
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", _FIXTURE_MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        reply = _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        expect("result" in reply, "initialize failed")
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        tools = {t["name"] for t in reply.get("result", {}).get("tools", [])}
        expect(tools >= {"echo", "fail"}, "the request after the notification failed")
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.stdin:
        proc.stdin.close()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout:
        proc.stdout.close()


def _send(proc: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _rpc(proc: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any]:
    """Send a request and read lines until its response (bounded by a reader thread)."""
    _send(proc, message)
    box: dict[str, Any] = {}

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip().startswith("{"):
                reply = json.loads(line)
                if reply.get("id") == message["id"]:
                    box["reply"] = reply
                    return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    if "reply" not in box:
        raise McpConnectError("the fixture did not answer")
    reply: dict[str, Any] = box["reply"]
    return reply
