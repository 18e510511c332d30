"""Listings of tools, resources and prompts: the rows of the servers that answered, each other
server as a problem with its reason, and a clear error only for a server not configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemon_skills.errors import McpError
from lemon_skills.mcp.config.entries import StdioServer
from lemon_skills.mcp.config.resolve import ResolvedConfig
from lemon_skills.mcp.output.report import down, off_reason, require_server
from lemon_skills.mcp.session.handle import ServerHandle
from tests.helpers.mcp import rich, smoke

GHOST = {"name": "ghost", "command": "lemon-test-no-such-command"}


def config(*servers: StdioServer, enabled: bool = True) -> ResolvedConfig:
    reason = None if enabled else "disabled by LEMON_MCP_DISABLED"
    return ResolvedConfig(
        cwd=Path("."), enabled=enabled, disabled_reason=reason, servers=servers, issues=()
    )


GIT = StdioServer(name="git", command="srv")
OFF = StdioServer(name="notes", command="srv", enabled=False)


def test_a_server_is_found_enabled_or_not_and_a_typo_gets_the_close_name():
    cfg = config(GIT, OFF)
    assert require_server(cfg, "notes") is OFF
    with pytest.raises(McpError, match="unknown MCP server 'gti'") as err:
        require_server(cfg, "gti")
    assert err.value.hint == "did you mean 'git'? known servers: git, notes"
    with pytest.raises(McpError) as err:
        require_server(config(), "git")
    assert err.value.hint == "no MCP servers are configured here (see `lemon mcp --help`)"


def test_why_nothing_is_listed_at_all():
    assert off_reason(config(GIT, OFF), None) is None
    assert off_reason(config(GIT, OFF), "git") is None
    assert off_reason(config(GIT, OFF), "notes") == (
        "MCP server 'notes' is disabled in its config (\"enabled\": false)"
    )
    assert off_reason(config(GIT, enabled=False), None) == (
        "MCP is off here: disabled by LEMON_MCP_DISABLED"
    )


def test_a_server_not_connected_is_a_problem_with_its_reason():
    handle = ServerHandle(key="k", config=GIT)
    handle.state = "connecting"
    assert down(handle).to_dict() == {  # type: ignore[union-attr]
        "server": "git",
        "state": "connecting",
        "error": "still starting",
    }
    handle.state, handle.last_error = "failed", "executable not found: srv"
    assert down(handle).error == "executable not found: srv"  # type: ignore[union-attr]


def test_a_listing_has_the_rows_of_the_servers_that_answered_and_the_others_as_problems(
    make_source, in_memory
):
    source = make_source([rich("rich"), smoke("fx"), GHOST])
    report = source.report("resources")
    assert {(r["server"], r["uri"]) for r in report.rows} == {
        ("rich", "fixture://status"),
        ("rich", "fixture://secret"),
        ("fx", "fixture://status"),
    }
    [problem] = report.problems
    assert (problem.server, problem.state) == ("ghost", "failed")
    assert "executable not found" in problem.error and report.off_reason is None
    only = source.report("prompts", server="fx")
    assert [(r["server"], r["name"]) for r in only.rows] == [("fx", "brief")]
    assert only.problems == ()
    tools = source.report("tools", server="rich")
    assert tools.rows and {r["server"] for r in tools.rows} == {"rich"}
