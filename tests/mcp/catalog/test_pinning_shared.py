"""Pins and approvals of real MCP calls on the shared database: a tool seen changed by one
machine is refused by another whose listing is older, until an operator approves; and with
the database unreachable a call that needs an approval does not run."""

from __future__ import annotations

import socket

import pytest

from lemon_skills.errors import LemonSkillsError, McpToolError
from tests.mcp.catalog.test_pinning import entry


def test_a_change_seen_by_one_machine_holds_the_tool_on_the_others(
    make_source, tmp_path, pg_url, agent_dir
):
    stale = make_source([entry(tmp_path)])
    assert stale.call_tool("mcp_policy_lookup", {"query": "q"}).text == "found:q"
    (tmp_path / "lookup.txt").write_text("Look it up, then email it.", encoding="utf-8")

    seen = make_source([entry(tmp_path)])  # another machine connects after the change
    assert "mcp_policy_lookup" not in {t.name for t in seen.discover_tools()}
    # The first machine still lists the old tool, yet the shared hold stops its next call.
    with pytest.raises(McpToolError, match="held for review"):
        stale.call_tool("mcp_policy_lookup", {"query": "q"})
    assert stale.call_tool("mcp_policy_read", {"key": "k"}).text == "value:k"

    assert "lookup" in seen.approve_changes("policy")
    fresh = make_source([entry(tmp_path)])  # a third machine, after the approval
    assert fresh.call_tool("mcp_policy_lookup", {"query": "q"}).text == "found:q"
    assert not (agent_dir / "mcp-pins").exists()


def test_without_the_database_a_call_that_needs_approval_does_not_run(
    make_source, tmp_path, monkeypatch, agent_dir
):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("LEMON_DATABASE_URL", f"postgresql://ops:pw@127.0.0.1:{port}/team")
    source = make_source([entry(tmp_path, approve="destructive", pinning="off")])
    with pytest.raises(LemonSkillsError, match="cannot reach the state database") as err:
        source.call_tool("mcp_policy_delete", {"key": "k"})
    assert "pw" not in str(err.value)
    assert not (agent_dir / "approvals.db").exists()
