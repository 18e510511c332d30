"""Approval by annotation: which calls wait for an operator or the host, against a server
whose tools are read-only, destructive or say nothing (stdio and HTTP)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import McpToolError
from tests.mcp.servers import policy

SERVER = Path(policy.__file__)


def entry(**extra: Any) -> dict[str, Any]:
    return {"name": "policy", "command": sys.executable, "args": [str(SERVER)]} | extra


def test_destructive_asks_for_unannotated_and_destructive_tools_only(make_source, in_memory):
    asked: list[str] = []

    def decide(request: dict[str, Any]) -> bool:
        asked.append(request["tool"])
        return request["tool"] != "delete"

    source = make_source(
        [entry(approve="destructive", approve_tools={"big": "never"})], approve_call=decide
    )
    assert source.call_tool("mcp_policy_read", {"key": "k"}).text == "value:k"
    assert source.call_tool("mcp_policy_big", {"size": 3}).text == "012"
    assert asked == []
    assert source.call_tool("mcp_policy_plain").text == "plain"
    assert asked == ["plain"]
    with pytest.raises(McpToolError, match="was not run: the host declined it"):
        source.call_tool("mcp_policy_delete", {"key": "k"})
    assert asked == ["plain", "delete"]


def test_the_default_asks_nobody(make_source, in_memory):
    def decide(request: dict[str, Any]) -> bool:
        raise AssertionError("asked")

    source = make_source([entry()], approve_call=decide)
    assert source.call_tool("mcp_policy_delete", {"key": "k"}).text == "deleted:k"


def test_block_tools_still_applies_beside_approval(make_source, in_memory):
    source = make_source(
        [entry(approve="always", block_tools=["delete"])], approve_call=lambda r: True
    )
    names = {t.name for t in source.discover_tools()}
    assert "mcp_policy_delete" not in names and "mcp_policy_read" in names
    rows = {r["tool"]: r for r in source.report("tools").rows}
    assert rows["read"]["needs_approval"] is True


def operator(store: ApprovalStore, decision: str, seen: list[dict[str, Any]]) -> threading.Thread:
    """Another terminal: waits for the pending approval and decides it."""

    def run() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pending = store.list()
            if pending:
                seen.append(dict(pending[0].action))
                store.decide(pending[0].id, decision, by="operator")  # type: ignore[arg-type]
                return
            time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_an_operator_approves_a_destructive_call_over_http(make_source, serve, tmp_path):
    store = ApprovalStore(tmp_path / "approvals.db")
    served = serve(policy.http_app())
    source = make_source(
        [{"name": "policy", "url": served.url("/mcp"), "approve": "destructive"}], approvals=store
    )
    seen: list[dict[str, Any]] = []
    operator(store, "approved", seen)
    assert source.call_tool("mcp_policy_delete", {"key": "k"}).text == "deleted:k"
    assert seen[0]["name"] == "mcp_policy_delete" and seen[0]["arguments"] == {"key": "k"}
    operator(store, "denied", seen)
    with pytest.raises(McpToolError, match="was denied"):
        source.call_tool("mcp_policy_delete", {"key": "k"})


def test_a_host_asks_without_waiting_and_runs_an_approved_call_once(make_source, in_memory):
    asked: list[str] = []

    def decide(request: dict[str, Any]) -> bool:
        asked.append(request["tool"])
        return False

    source = make_source([entry(approve="destructive")], approve_call=decide)
    assert source.needs_approval("mcp_policy_delete") is None  # nothing discovered yet
    source.discover_tools()
    assert source.needs_approval("mcp_policy_delete") is True
    assert source.needs_approval("mcp_policy_read") is False

    async def call(approved: bool) -> str:
        return (await source.acall_tool("mcp_policy_delete", {"key": "k"}, approved=approved)).text

    # Approved in the host's own human-in-the-loop: the approver is not asked again.
    assert asyncio.run(call(True)) == "deleted:k" and asked == []
    with pytest.raises(McpToolError, match="the host declined it"):
        asyncio.run(call(False))
    assert asked == ["delete"]
