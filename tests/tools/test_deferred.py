from __future__ import annotations

from collections.abc import Sequence

from lemon_skills.tool import Tool, ToolContext, ToolResult, to_anthropic, to_openai
from lemon_skills.tools.deferred import TOOL_SEARCH, select, tool_tokens


def _ok(params: dict[str, object], ctx: ToolContext) -> ToolResult:
    return ToolResult("ok")


def tool(name: str, description: str = "does a thing", origin: str = "mcp") -> Tool:
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "x" * 200}}}
    return Tool(name=name, description=description, parameters=schema, handler=_ok, origin=origin)  # type: ignore[arg-type]


BUILTIN = tool("read_skill", origin="builtin")
MCP = [tool(f"mcp_s_t{i}", f"tool number {i}") for i in range(40)]


def ranker(query: str, limit: int) -> Sequence[str]:
    # Deterministic stand-in for find_tools: the tools whose number the query names.
    return [t.name for t in MCP if t.description.endswith(f" {query}")][:limit]


def choose(**kw: object):  # type: ignore[no-untyped-def]
    args = {
        "deferrable": [t.name for t in MCP],
        "pinned": ["mcp_s_t7"],
        "rank": ranker,
        "request": "3",
        "budget": None,
        "mode": "auto",
    } | kw
    return select([BUILTIN, *MCP], **args)  # type: ignore[arg-type]


def test_all_sends_everything_and_auto_without_a_budget_is_all():
    for mode in ("all", "auto"):
        sel = choose(mode=mode)
        assert sel.mode == "all" and len(sel.tools) == 41 and sel.deferred == ()
        assert sel.tokens_sent == sel.tokens_all == tool_tokens([BUILTIN, *MCP])


def test_search_sends_builtins_pinned_ranked_and_the_meta_tool():
    sel = choose(mode="search")
    names = [t.name for t in sel.tools]
    assert names == ["read_skill", "mcp_s_t3", "mcp_s_t7", TOOL_SEARCH]
    assert len(sel.deferred) == 38 and "mcp_s_t7" not in sel.deferred
    assert sel.tokens_sent < sel.tokens_all / 5


def test_auto_defers_only_when_all_definitions_exceed_the_share_of_the_budget():
    heavy = tool_tokens([BUILTIN, *MCP])
    assert choose(budget=heavy * 10 + 100).mode == "all"  # under 10%
    assert choose(budget=heavy * 10 - 100).mode == "search"
    assert choose(budget=heavy * 2, share=0.6).mode == "all"


def test_tool_search_returns_definitions_the_exporters_accept():
    meta = next(t for t in choose(mode="search").tools if t.name == TOOL_SEARCH)
    result = meta.call({"query": "12"})
    assert not result.is_error and "mcp_s_t12" in result.text
    assert result.details["names"] == ["mcp_s_t12"]
    loaded = [t for t in MCP if t.name in result.details["names"]]
    assert result.details["openai"] == to_openai(loaded)
    assert result.details["anthropic"] == to_anthropic(loaded)
    assert meta.call({"query": "nothing like it"}).details["names"] == []
    assert meta.call({}).is_error  # the query is required
