"""Builders for MCP server entries pointing at the fixture servers of the test-suite."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import types

from lemon_skills.errors import McpToolError

SERVERS = Path(__file__).resolve().parent.parent / "mcp" / "servers"
SMOKE_MODULE = "lemon_skills.selftest.fixtures.server"
SAMPLING_MODULE = "lemon_skills.selftest.fixtures.sampling_server"


def rich(name: str | None = "rich", *args: str, **extra: Any) -> dict[str, Any]:
    """The rich fixture (echo, fail, pid, image, structured, sleep, ... two resources)."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SERVERS / "rich.py"), *args]}
    if name is not None:
        entry["name"] = name
    return entry | extra


def smoke(name: str = "fx", **extra: Any) -> dict[str, Any]:
    """The bundled smoke fixture (echo, fail, fixture://status, brief)."""
    return {"name": name, "command": sys.executable, "args": ["-m", SMOKE_MODULE]} | extra


def broken(name: str, mode: str, **extra: Any) -> dict[str, Any]:
    """A misbehaving stdio server: ``crash``, ``hang`` or ``garbage``."""
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(SERVERS / "broken.py"), mode],
    } | extra


def configure_project(project: Path) -> Path:
    """Give ``project`` an mcp.json with the smoke fixture (``fx``, as a named
    ``mcpServers`` entry) and the rich fixture (``rich``, in the ``servers`` list)."""
    (project / ".lemon").mkdir()
    doc = {"mcpServers": {"fx": smoke("ignored") | {"name": "fx"}}, "servers": [rich("rich")]}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    return project


def kill_and_wait(pid: int, timeout_s: float = 5.0) -> None:
    """SIGKILL a server and wait until it is dead (a zombie or gone), so the test sees a
    server that died while idle, not one dying at the moment of the next request."""
    os.kill(pid, signal.SIGKILL)
    stat = Path(f"/proc/{pid}/stat")
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            state = stat.read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.005)
    raise TimeoutError(f"process {pid} still alive {timeout_s} s after SIGKILL")


def in_process(config: Any) -> Any:
    """A ``transport_factory``: the smoke, rich, sampling and policy fixture entries (as
    ``smoke()``, ``rich()`` and the sampling and policy tests write them) are served in this
    process over the SDK's in-memory transport, a fresh server per connection; any other entry
    (and one with ``cwd``, ``--garbage`` or an ``env`` other than the policy fixture's state
    directory, which only a real process honours) keeps its own transport."""
    from mcp.client._memory import InMemoryTransport

    from lemon_skills.mcp.config.entries import StdioServer

    if not isinstance(config, StdioServer) or config.command != sys.executable:
        return None
    if config.cwd is not None:
        return None
    server = _fixture_server(list(config.args), dict(config.env))
    return None if server is None else InMemoryTransport(server)


def _fixture_server(args: list[str], env: dict[str, str]) -> Any:
    if args == [str(SERVERS / "policy.py")] and set(env) <= {"POLICY_DIR"}:
        from tests.mcp.servers import policy

        state = env.get("POLICY_DIR")
        return policy.build(Path(state) if state else Path("/nonexistent"))
    if env:
        return None
    if args == ["-m", SMOKE_MODULE]:
        from lemon_skills.selftest.fixtures import server as smoke_server

        return smoke_server.build()
    if args == ["-m", SAMPLING_MODULE]:
        from lemon_skills.selftest.fixtures import sampling_server

        return sampling_server.build()
    if not args or args[0] != str(SERVERS / "rich.py"):
        return None
    from tests.mcp.servers import rich as rich_server

    rest = args[1:]
    if not rest:
        return rich_server.build()
    if len(rest) == 2 and rest[0] == "--name":
        return rich_server.build(rest[1])
    return None


def check_sampling_only_when_configured(make_source: Any, protocol: str) -> None:
    """A server that asks for sampling gets the host's answer when a sampling callback is
    configured, and a clear refusal when none is."""
    seen: list[str] = []

    async def sample(
        ctx: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        text = params.messages[0].content.text  # type: ignore[union-attr]
        seen.append(text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"pong:{text}"), model="m"
        )

    with_sampling = make_source([rich("s", protocol=protocol)], sampling_factory=lambda cfg: sample)
    assert (
        with_sampling.call_tool("mcp_s_ask", {"question": "ping"}).text == "model said: pong:ping"
    )
    assert seen == ["ping"]
    without = make_source([rich("s", protocol=protocol)])
    with pytest.raises(McpToolError, match="did not declare the sampling capability"):
        without.call_tool("mcp_s_ask", {"question": "ping"})
