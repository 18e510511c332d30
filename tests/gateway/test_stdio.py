"""The gateway over stdio: upstream tools under lemon's names, resources and prompts
namespaced, skills as `lemon mcp serve` serves them, bad input answered clearly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from tests.gateway.conftest import gateway, shifty, text
from tests.helpers.mcp import SERVERS, broken, smoke
from tests.helpers.skills import write_skill
from tests.mcp.servers.broken import LEAKED


def test_tools_resources_prompts_and_skills_through_one_server(
    project: Path, servers: Any, project_skills: Path
) -> None:
    servers(smoke("fx"))
    write_skill(project_skills, "alpha", description="Deploy kubernetes clusters with helm.")
    anyio.run(_tools_resources_prompts, project)


async def _tools_resources_prompts(project: Path) -> None:
    async with gateway(project, "--tools", "all") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"mcp_fx_echo", "mcp_fx_fail", "find_skills", "read_skill"} <= names
        skills = [str(r.uri) for r in (await s.list_resources()).resources]
        assert "skill://alpha/SKILL.md" in skills
        out = await s.call_tool("mcp_fx_echo", {"message": "hi"})
        assert not out.is_error and out.content[0].text == "echo:hi"
        failed = await s.call_tool("mcp_fx_fail", {})
        assert failed.is_error and "planned failure" in failed.content[0].text
        uris = [str(r.uri) for r in (await s.list_resources()).resources]
        assert "mcp+fx:fixture://status" in uris
        read = await s.read_resource("mcp+fx:fixture://status")
        assert read.contents[0].text == "status:ok"
        prompts = {p.name for p in (await s.list_prompts()).prompts}
        assert "mcp_fx_brief" in prompts
        got = await s.get_prompt("mcp_fx_brief", {"topic": "cats"})
        assert "cats" in got.messages[0].content.text


def test_search_mode_lists_tool_search_and_adds_what_it_finds(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    servers(smoke("fx"), shifty("sh", tmp_path / "sh", always_load=["counted"]))

    async def main() -> None:
        changed = anyio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(getattr(message, "root", message), types.ToolListChangedNotification):
                changed.set()

        async with gateway(project, "--tools", "search", message_handler=on_message) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert "tool_search" in names and "mcp_sh_counted" in names  # pinned
            assert "mcp_fx_echo" not in names
            # Routed by name although not listed.
            assert text(await s.call_tool("mcp_fx_echo", {"message": "x"})) == "echo:x"
            none = await s.call_tool("tool_search", {"query": "zebra giraffe quantum"})
            assert text(none).startswith("No tool matches")
            found = await s.call_tool("tool_search", {"query": "echo a message back"})
            assert "mcp_fx_echo" in text(found)
            with anyio.fail_after(5):
                await changed.wait()
            names = {t.name for t in (await s.list_tools()).tools}
            assert "mcp_fx_echo" in names

    anyio.run(main)


@pytest.mark.slow
def test_a_server_dying_on_a_call_is_reported_to_the_host_without_its_secrets(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    words = f"flaky: refused, Authorization: Bearer {LEAKED[0]} and {LEAKED[1]}"
    env = {"FLAKY_DIR": str(tmp_path), "FLAKY_LAST_WORDS": words}
    servers(
        {"name": "fl", "command": sys.executable, "args": [str(SERVERS / "flaky.py")], "env": env}
    )

    async def main() -> None:
        async with gateway(project, "--tools", "all") as s:
            out = await s.call_tool("mcp_fl_crash", {})
            assert out.is_error and "flaky: refused, Authorization:" in text(out), text(out)
            assert not [secret for secret in LEAKED if secret in text(out)]

    anyio.run(main)


def test_bad_input_is_answered_without_reaching_the_server(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    state = tmp_path / "sh"
    servers(shifty("sh", state), broken("stuck", "hang", ready_timeout_ms=1500))

    async def main() -> None:
        async with gateway(project, "--tools", "all") as s:
            with pytest.raises(MCPError, match="did you mean mcp_sh_counted"):
                await s.call_tool("mcp_sh_countd", {"n": 1})
            wrong = await s.call_tool("mcp_sh_counted", {"n": "three"})
            assert wrong.is_error and "was not called" in text(wrong)
            assert not (state / "counted.runs").exists()
            with anyio.fail_after(5):  # the hung server's tool fails fast
                stuck = await s.call_tool("mcp_stuck_anything", {})
            assert stuck.is_error and "stuck" in text(stuck)
            assert text(await s.call_tool("mcp_sh_counted", {"n": 1})) == "1"

    anyio.run(main)


@pytest.mark.slow
def test_a_2026_client_hears_of_found_tools_on_its_listen_stream(
    project: Path, servers: Any
) -> None:
    servers(smoke("fx"))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lemon_skills", "mcp", "gateway", "--cwd", str(project), "--tools", "search"],
        env=dict(os.environ),
    )

    async def main() -> None:
        async with Client(params) as client:
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
            names = {t.name for t in (await client.list_tools()).tools}
            assert "mcp_fx_echo" not in names
            async with client.listen(tools_list_changed=True) as sub:
                await client.call_tool("tool_search", {"query": "echo a message back"})
                with anyio.fail_after(10):
                    event = await sub.__anext__()
            assert type(event).__name__ == "ToolsListChanged"
            names = {t.name for t in (await client.list_tools()).tools}
            assert "mcp_fx_echo" in names

    anyio.run(main)


def test_malformed_json_rpc_is_answered_and_the_gateway_goes_on(project: Path) -> None:
    proc = _raw_gateway(project)

    def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
    assert json.loads(proc.stdout.readline())["id"] == 0
    send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    send(b"this is not json")
    send(b'{"jsonrpc": "2.0", "id": 3, "params": {}}')
    send(b'{"jsonrpc": "2.0", "id": 4, "method": "ping"}')
    answers = [json.loads(proc.stdout.readline()) for _ in range(3)]
    proc.stdin.close()
    assert proc.wait(20) == 0
    proc.stdout.close()
    assert [a.get("error", {}).get("code") for a in answers] == [-32700, -32600, None]
    assert answers[2] == {"jsonrpc": "2.0", "id": 4, "result": {}}


@pytest.mark.slow
def test_an_agent_profile_applies_to_skills_and_servers_alike(
    project: Path, servers: Any, project_skills: Path, tmp_path: Path
) -> None:
    servers(smoke("fx"), shifty("sh", tmp_path / "sh"))
    write_skill(project_skills, "git-commit", description="Write git commit messages.")
    write_skill(project_skills, "git-rebase", description="Rebase git branches safely.")
    profile = {"deny": ["git-rebase", "mcp:sh"]}
    (project / ".lemon" / "skills.json").write_text(
        json.dumps({"version": 1, "profiles": {"dev": profile}})
    )

    async def main() -> None:
        async with gateway(project, "--tools", "all", "--agent", "dev") as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert "mcp_fx_echo" in names and not any(n.startswith("mcp_sh_") for n in names)
            uris = {str(r.uri) for r in (await s.list_resources()).resources}
            assert "skill://git-commit/SKILL.md" in uris
            assert "skill://git-rebase/SKILL.md" not in uris
            with pytest.raises(MCPError, match="unknown tool"):
                await s.call_tool("mcp_sh_counted", {"n": 1})

    anyio.run(main)
    assert not (tmp_path / "sh" / "counted.runs").exists()


def test_tools_list_on_the_wire_is_one_json_rpc_answer_with_every_definition(
    project: Path, servers: Any
) -> None:
    """The listing's JSON is spliced from per-tool bytes: the line must still be one valid
    answer to the request's own id, with each definition as the server declared it."""
    servers(smoke("fx"))
    proc = _raw_gateway(project)

    def ask(rid: Any, method: str, params: dict[str, Any] | None = None) -> Any:
        message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        return json.loads(proc.stdout.readline())  # type: ignore[union-attr]

    client = {"name": "t", "version": "1"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
    assert "result" in ask(0, "initialize", init)
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    first, again = ask("list-é", "tools/list"), ask(7, "tools/list")
    proc.stdin.close()
    assert proc.wait(20) == 0
    proc.stdout.close()
    assert first["id"] == "list-é" and again["id"] == 7
    assert first["result"] == again["result"]
    tools = {t["name"]: t for t in first["result"]["tools"]}
    assert {"mcp_fx_echo", "find_skills", "read_result"} <= set(tools)
    echo = tools["mcp_fx_echo"]["inputSchema"]
    assert echo["properties"]["message"]["type"] == "string"
    assert echo["required"] == ["message"]


def _raw_gateway(project: Path) -> subprocess.Popen[bytes]:
    """The gateway over stdio with no client library: JSON lines on its pipes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lemon_skills", "mcp", "gateway", "--cwd", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stdin is not None and proc.stdout is not None
    return proc
