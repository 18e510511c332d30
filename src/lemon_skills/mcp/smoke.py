"""Smoke proofs: run the original's MCP smoke checks against the bundled fixture servers.

``run_smoke("stdio")`` runs the 17 stdio checks and ``run_smoke("sse")`` the 14 SSE checks of
the original (sampling checks are reported as skipped until sampling policies exist), and
returns the proof JSON: ``status`` (failed / skipped / completed), counts, one record per check
and the ``cleanup`` flags saying the proof holds no raw paths, prompts or tool data.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from .._fs import write_json_atomic
from ..errors import McpConnectError, McpToolError
from ..tools.registry import ToolRegistry
from .config import ServerConfig
from .connect import connect
from .parse import parse_server
from .source import McpSource

SAMPLING_SKIP = "sampling policies are not available in this version"
UTILITY_SUFFIXES = ("resources_list", "resource_read", "prompts_list", "prompt_get")
_CLEANUP = dict.fromkeys(
    (
        "includes_raw_paths",
        "includes_raw_filenames",
        "includes_raw_prompts",
        "includes_raw_provider_responses",
        "includes_raw_tool_arguments",
        "includes_raw_tool_results",
        "includes_server_io",
    ),
    False,
)


class _Proof:
    def __init__(self, kind: str) -> None:
        self.scope = f"mcp_{kind}_smoke"
        self.checks: list[dict[str, Any]] = []

    def check(self, name: str, fn: Callable[[], None]) -> None:
        record: dict[str, Any] = {"name": name, "proof_scope": self.scope}
        try:
            fn()
        except Exception as exc:  # a failed check is recorded, and the next one still runs
            record.update(
                status="failed", reason_kind=f"{self.scope}_failure", failure_hint=_hint(exc)
            )
        else:
            record["status"] = "completed"
        self.checks.append(record)

    def skip(self, name: str, reason: str) -> None:
        self.checks.append(
            {"name": name, "proof_scope": self.scope, "status": "skipped", "reason": reason}
        )

    def result(self) -> dict[str, Any]:
        counts = {
            s: sum(1 for c in self.checks if c["status"] == s)
            for s in ("completed", "failed", "skipped")
        }
        if counts["failed"]:
            status = "failed"
        elif counts["completed"]:
            status = "completed"
        else:
            status = "skipped" if counts["skipped"] else "unknown"
        return {
            "version": 1,
            "status": status,
            "proof": self.scope,
            "proof_scope": self.scope,
            "generated_at": datetime.now(UTC).isoformat(),
            "completed_count": counts["completed"],
            "failed_count": counts["failed"],
            "skipped_count": counts["skipped"],
            "checks": self.checks,
            "cleanup": dict(_CLEANUP),
        }


def run_smoke(kind: str) -> dict[str, Any]:
    """Run the proof for ``"stdio"`` or ``"sse"`` and return its JSON."""
    proof = _Proof(kind)
    with _fixture(kind) as make:
        if kind == "stdio":
            proof.check("mcp_stdio_degraded_startup_missing_command", lambda: _degraded(make))
        _client_checks(proof, kind, make(kind))
        _source_checks(proof, kind, make)
        if kind == "stdio":
            proof.check(
                "mcp_server_accepts_spec_initialized_notification", _initialized_notification
            )
            for name in (
                "mcp_stdio_sampling_callback_wrapper",
                "mcp_stdio_sampling_reviewed_model_policy",
                "mcp_stdio_sampling_ops_approval_bridge",
            ):
                proof.skip(name, SAMPLING_SKIP)
    return proof.result()


def write_proof(proof: dict[str, Any], *, out: Path | None, cwd: Path) -> list[Path]:
    """Write ``proof`` to ``out`` (default ``<cwd>/.lemon/proofs/mcp-<kind>-latest.json``)
    and an archive copy ``mcp-<kind>-smoke-<stamp>.json`` next to it."""
    kind = proof["proof"].removeprefix("mcp_").removesuffix("_smoke")
    target = out if out is not None else cwd / ".lemon" / "proofs" / f"mcp-{kind}-latest.json"
    stamp = re.sub(r"[^0-9A-Za-z]", "", datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ"))
    archive = target.parent / f"mcp-{kind}-smoke-{stamp}.json"
    for path in (target, archive):
        write_json_atomic(path, proof)
    return [target, archive]


MakeConfig = Callable[..., ServerConfig]


@contextmanager
def _fixture(kind: str) -> Iterator[MakeConfig]:
    """Yield a factory of server entries for the fixture (stdio command or served SSE app)."""
    if kind == "stdio":

        def make_stdio(name: str, **extra: Any) -> ServerConfig:
            entry = {"name": name, "command": sys.executable, "args": ["-m", _FIXTURE_MODULE]}
            return parse_server({**entry, **extra})

        yield make_stdio
        return
    from .fixtures import server
    from .fixtures.serve import Served

    served: list[AbstractContextManager[Any]] = []

    def make_sse(name: str, **extra: Any) -> ServerConfig:
        app = Served(server.sse_app()).__enter__()
        served.append(app)
        return parse_server({"name": name, "type": "sse", "url": app.url("/sse"), **extra})

    try:
        yield make_sse
    finally:
        for app in served:
            app.__exit__(None, None, None)


_FIXTURE_MODULE = "lemon_skills.mcp.fixtures.server"


def _degraded(make: MakeConfig) -> None:
    missing = parse_server({"name": "missing", "command": "definitely-not-a-real-mcp-server"})
    with McpSource([missing, make("stdio")], include_config=False) as source:
        names = {t.name for t in source.discover_tools()}
        status = source.status()["servers"]
    _expect("mcp_stdio_echo" in names, "the healthy server lost its tools")
    _expect(not status["missing"]["connected"], "the missing command reported connected")
    _expect("not found" in (status["missing"]["last_error"] or ""), "no reason for the failure")


def _client_checks(proof: _Proof, kind: str, cfg: ServerConfig) -> None:
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

    def expect(key: str, want: Any) -> Callable[[], None]:
        def check() -> None:
            if key not in data:
                raise McpConnectError("the fixture session did not complete")
            got = data[key]
            ok = want <= got if isinstance(want, set) else got == want
            _expect(ok, f"unexpected {key}")

        return check

    title = {"stdio": "Stdio Fixture", "sse": "SSE Fixture"}[kind]

    def initializes() -> None:
        anyio.run(session)
        expect("info", title)()

    proof.check(f"mcp_{kind}_client_initializes", initializes)
    proof.check(f"mcp_{kind}_lists_tools", expect("tools", {"echo", "fail"}))
    proof.check(f"mcp_{kind}_lists_resources", expect("resources", {"fixture://status"}))
    proof.check(f"mcp_{kind}_reads_resource", expect("read", [("fixture://status", "status:ok")]))
    proof.check(f"mcp_{kind}_lists_prompts", expect("prompts", {"brief"}))
    proof.check(f"mcp_{kind}_gets_prompt", expect("prompt", ("Write a brief", ["user"])))
    proof.check(f"mcp_{kind}_calls_tool_success", expect("ok", (False, ["echo:ok"])))
    proof.check(f"mcp_{kind}_calls_tool_error", expect("bad", (True, ["planned failure"])))


def _source_checks(proof: _Proof, kind: str, make: MakeConfig) -> None:
    prefix = f"mcp_{kind}_"
    with McpSource([make(kind)], include_config=False) as source:
        proof.check(
            f"mcp_source_discovers_prefixed_{kind}_tools", lambda: _discovers(source, prefix)
        )
        if kind != "stdio":
            proof.check(
                f"mcp_source_invokes_{kind}_tool",
                lambda: _expect(
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
    proof.check(f"mcp_source_applies_{kind}_filters", lambda: _filters(make, kind))


def _discovers(source: McpSource, prefix: str) -> None:
    names = {t.name for t in source.discover_tools()}
    wanted = {prefix + s for s in ("echo", "fail", *UTILITY_SUFFIXES)}
    _expect(wanted <= names, f"missing {sorted(wanted - names)}")


def _utilities(source: McpSource, prefix: str) -> None:
    _expect(
        len(json.loads(source.call_tool(prefix + "resources_list").text)) == 1, "resources_list"
    )
    read = source.call_tool(prefix + "resource_read", {"uri": "fixture://status"})
    _expect("status:ok" in read.text, "resource_read")
    _expect(len(json.loads(source.call_tool(prefix + "prompts_list").text)) == 1, "prompts_list")
    got = json.loads(
        source.call_tool(prefix + "prompt_get", {"name": "brief", "arguments": {"topic": "t"}}).text
    )
    _expect([m["role"] for m in got["messages"]] == ["user"], "prompt_get")


def _registry(source: McpSource, prefix: str) -> None:
    registry = ToolRegistry(mcp_source=source)
    _expect(any(t.name == prefix + "echo" for t in registry.get_tools()), "echo not in registry")
    _expect(registry.conflict_report().mcp_count >= 6, "mcp_count below 6")


def _status(source: McpSource) -> None:
    servers = list(source.status()["servers"].values())
    caps = {"tools": True, "resources": True, "prompts": True}
    _expect(
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


def _filters(make: MakeConfig, kind: str) -> None:
    prefix = f"mcp_{kind}_"
    extra: dict[str, Any] = {"allow_tools": ["echo"]}
    if kind == "stdio":
        extra |= {"block_resources": ["fixture://status"], "block_prompts": ["brief"]}
    with McpSource([make(kind, **extra)], include_config=False) as source:
        names = {t.name for t in source.discover_tools()}
        _expect(
            prefix + "echo" in names and prefix + "fail" not in names, "tool filter not applied"
        )
        if kind != "stdio":
            return
        _expect(
            json.loads(source.call_tool(prefix + "resources_list").text) == [], "resource listed"
        )
        _expect(json.loads(source.call_tool(prefix + "prompts_list").text) == [], "prompt listed")
        _expect_raises(
            lambda: source.call_tool(prefix + "resource_read", {"uri": "fixture://status"}),
            "blocked",
        )
        _expect_raises(
            lambda: source.call_tool(prefix + "prompt_get", {"name": "brief"}), "blocked"
        )


def _initialized_notification() -> None:
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
        _expect("result" in reply, "initialize failed")
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        tools = {t["name"] for t in reply.get("result", {}).get("tools", [])}
        _expect(tools >= {"echo", "fail"}, "the request after the notification failed")
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


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def _expect_raises(fn: Callable[[], Any], fragment: str) -> None:
    try:
        fn()
    except McpToolError as exc:
        _expect(fragment in str(exc), f"unexpected error: {exc}")
        return
    raise AssertionError("the blocked item was served")


def _hint(exc: Exception) -> str:
    text = re.sub(r"(/[^\s:'\"]+)+", "<path>", str(exc))[:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
