"""The span of every MCP call through lemon (server, approval asked and decided, pin held,
result spilled) nested around the mcp SDK's own client span, tool search's span and the call
and search metrics, read back through the OpenTelemetry SDK's in-memory exporters."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.catalog.toolsearch import find_tools
from tests.mcp.servers import policy

POLICY = Path(policy.__file__)


def _policy(**extra: Any) -> dict[str, Any]:
    return {"name": "policy", "command": sys.executable, "args": [str(POLICY)]} | extra


@pytest.mark.usefixtures("in_memory")
def test_an_mcp_call_span_carries_the_policy_and_wraps_the_sdk_span(recorded, make_source):
    source = make_source(
        [_policy(approve="destructive", max_result_tokens=1000)], approve_call=lambda r: True
    )
    source.call_tool("mcp_policy_delete", {"key": "k"})
    source.call_tool("mcp_policy_big", {"size": 300_000})
    calls = recorded.named("lemon.mcp.call")
    by_tool = {s.attributes["gen_ai.tool.name"]: s for s in calls}
    delete, big = by_tool["delete"], by_tool["big"]
    assert delete.attributes["lemon.server"] == "policy"
    assert delete.attributes["lemon.approval.asked"] is True
    assert delete.attributes["lemon.approval.decision"] == "approved"
    assert delete.attributes["lemon.result.spilled"] is False
    assert big.attributes["lemon.result.spilled"] is True
    sdk = [
        s for s in recorded.spans.get_finished_spans() if s.name.startswith("MCP send tools/call")
    ]
    assert sdk, "the mcp SDK's client span is missing"
    assert {s.parent.span_id for s in sdk} <= {s.context.span_id for s in calls}
    (point,) = recorded.metric_points("lemon.mcp.call.duration")
    assert point.count == 2


@pytest.mark.usefixtures("in_memory")
def test_a_denied_call_is_reported_denied_and_never_reaches_the_server(recorded, make_source):
    source = make_source([_policy(approve="destructive")], approve_call=lambda r: False)
    with pytest.raises(McpToolError, match="was not run"):
        source.call_tool("mcp_policy_delete", {"key": "k"})
    (span,) = recorded.named("lemon.mcp.call")
    assert span.attributes["lemon.approval.decision"] == "denied"
    assert not [
        s for s in recorded.spans.get_finished_spans() if s.name.startswith("MCP send tools/call")
    ]


@pytest.mark.usefixtures("in_memory")
def test_a_call_to_a_tool_pinning_holds_says_so(recorded, make_source, tmp_path):
    state = {"env": {"POLICY_DIR": str(tmp_path)}}
    make_source([_policy(**state)]).discover_tools()
    (tmp_path / "lookup.txt").write_text("Look something up, then email it.", encoding="utf-8")
    source = make_source([_policy(**state)])
    source.discover_tools()
    with pytest.raises(McpToolError, match="held for review") as err:
        source.call_tool("mcp_policy_lookup", {"q": "x"})
    assert "lemon mcp approve-changes policy" in (err.value.hint or "")
    (span,) = recorded.named("lemon.mcp.call")
    assert span.attributes["lemon.pin.held"] is True


@pytest.mark.usefixtures("in_memory")
def test_tool_search_reports_its_answer_and_latency(recorded, make_source):
    source = make_source([_policy()])
    source.discover_tools()
    found = find_tools("delete the key", source=source)
    assert found
    (span,) = recorded.named("lemon.tools.search")
    assert list(span.attributes["lemon.tools.chosen"]) == [m.spec.name for m in found]
    assert span.attributes["lemon.tools.candidates"] >= len(found)
    (point,) = recorded.metric_points("lemon.tool_search.duration")
    assert point.count == 1
