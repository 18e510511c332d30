"""McpSource against real stdio servers: what belongs to the process (a kill, a crash, a
hang, garbage on stdout, its environment and working directory, a sleeping server that must
not block others, the SDK's sampling over a real pipe). Protocol logic is in
``test_source.py``."""

from __future__ import annotations

import json
import logging
import time

import anyio
import pytest

from lemon_skills import settings
from lemon_skills.errors import McpToolError
from lemon_skills.mcp.source import McpSource
from lemon_skills.tool import ToolContext
from tests.helpers.mcp import (
    broken,
    check_sampling_only_when_configured,
    kill_and_wait,
    rich,
    smoke,
)

pytestmark = pytest.mark.usefixtures("trusted_projects")


def test_a_server_killed_while_idle_is_respawned_before_the_next_call(make_source):
    source = make_source([rich("a"), rich("b")])
    source.discover_tools()
    pid = int(source.call_tool("mcp_a_pid").text)
    kill_and_wait(pid)
    # Until the source has seen the exit, a send may race the transport's teardown; the
    # issue's promise is that the next call after the death is known gets a fresh server.
    deadline = time.monotonic() + 10
    while source.status()["servers"]["a"]["connected"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert source.call_tool("mcp_a_echo", {"message": "back"}).text == "echo:back"
    assert int(source.call_tool("mcp_a_pid").text) != pid
    assert source.call_tool("mcp_b_echo", {"message": "x"}).text == "echo:x"
    assert source.status()["servers"]["a"]["connected"] is True


def test_a_server_killed_while_idle_is_respawned_in_async_mode_too():
    async def main() -> tuple[int, int]:
        async with McpSource([rich("a")], include_config=False) as source:
            pid = int((await source.acall_tool("mcp_a_pid")).text)
            kill_and_wait(pid)
            with anyio.fail_after(5):  # the manager sees the exit (and must not then back off)
                while (await source.astatus())["servers"]["a"]["connected"]:
                    await anyio.sleep(0.01)
            return pid, int((await source.acall_tool("mcp_a_pid")).text)

    before, after = anyio.run(main)
    assert after != before


def test_failing_servers_only_affect_themselves(make_source):
    quick = {"ready_timeout_ms": 1500}
    source = make_source(
        [
            rich("good"),
            {"name": "missing", "command": "definitely-not-a-real-mcp-server"},
            broken("crash", "crash"),
            broken("hang", "hang", **quick),
            broken("garbage", "garbage", **quick),
        ]
    )
    names = {t.name for t in source.discover_tools()}
    assert "mcp_good_echo" in names
    assert not any(
        n.startswith(("mcp_missing", "mcp_crash", "mcp_hang", "mcp_garbage")) for n in names
    )
    servers = source.status()["servers"]
    assert servers["good"]["connected"] is True
    errors = {n: s["last_error"] for n, s in servers.items() if n != "good"}
    assert all(not servers[n]["connected"] for n in errors)
    assert "executable not found" in errors["missing"]
    assert "planned crash" in errors["crash"]
    assert "startup timed out" in errors["hang"]
    assert "not JSON-RPC" in errors["garbage"]
    assert source.call_tool("mcp_good_echo", {"message": "still"}).text == "echo:still"


def test_a_few_garbage_lines_before_a_real_server_are_tolerated_and_counted(make_source, caplog):
    source = make_source([rich("noisy", "--garbage", "3")])
    assert source.call_tool("mcp_noisy_echo", {"message": "ok"}).text == "echo:ok"
    assert source.status()["servers"]["noisy"]["bad_stdout_lines"] == 3
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


def test_calls_time_out_and_the_server_keeps_working(make_source):
    source = make_source([rich("slow", timeout_ms=300)])
    with pytest.raises(McpToolError, match="timed out after 0.3 s"):
        source.call_tool("mcp_slow_sleep", {"seconds": 5})
    assert source.call_tool("mcp_slow_echo", {"message": "after"}).text == "echo:after"


def test_project_servers_stay_callable_from_any_directory(make_source, project, tmp_path):
    (project / ".lemon").mkdir()
    (project / ".lemon" / "mcp.json").write_text(json.dumps({"servers": [rich("proj")]}))
    source = make_source(include_config=True)
    tools = {t.name: t for t in source.discover_tools(project)}
    assert tools["mcp_proj_cwd"].call().text == str(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert source.discover_tools(elsewhere) == []
    assert source.call_tool("mcp_proj_echo", {"message": "x"}, cwd=elsewhere).text == "echo:x"
    assert (
        tools["mcp_proj_echo"].call({"message": "y"}, ToolContext(cwd=elsewhere)).text == "echo:y"
    )


def test_config_changes_are_picked_up_and_unchanged_servers_keep_running(make_source):
    settings.configure(mcp_servers=[rich("one")])
    source = make_source(include_config=True)
    pid = source.call_tool("mcp_one_pid").text
    settings.configure(mcp_servers=[rich("one"), smoke("two")])
    names = {t.name for t in source.discover_tools()}
    assert "mcp_two_echo" in names
    assert source.call_tool("mcp_one_pid").text == pid
    settings.configure(mcp_servers=[smoke("two")])
    assert not any(t.name.startswith("mcp_one_") for t in source.discover_tools())


def test_stdio_env_is_explicit_and_expanded(make_source, monkeypatch):
    monkeypatch.setenv("LEMON_TEST_SECRET", "do-not-leak")
    monkeypatch.setenv("TEST_REGION", "eu")
    source = make_source(
        [rich("env", env={"REGION": "${TEST_REGION}", "MODE": "${TEST_MODE:-dev}"})]
    )
    assert source.call_tool("mcp_env_getenv", {"name": "REGION"}).text == "eu"
    assert source.call_tool("mcp_env_getenv", {"name": "MODE"}).text == "dev"
    assert source.call_tool("mcp_env_getenv", {"name": "LEMON_TEST_SECRET"}).text == "<unset>"


def test_sampling_over_a_real_pipe_reaches_servers_that_ask_and_only_when_configured(make_source):
    check_sampling_only_when_configured(make_source, "legacy")
