"""ToolRegistry: precedence built-in > WASM > extension > MCP, conflict report, isolation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lemon_skills.mcp.source import McpSource
from lemon_skills.tools import Tool, ToolContext, ToolRegistry, ToolResult
from tests.helpers.mcp import smoke

pytestmark = pytest.mark.usefixtures("in_memory")


def make_tool(name: str, text: str) -> Tool:
    def handler(params: dict[str, object], ctx: ToolContext) -> ToolResult:
        return ToolResult(text)

    return Tool(name=name, description=text, parameters={"type": "object"}, handler=handler)


@pytest.fixture
def mcp_source() -> Iterator[McpSource]:
    source = McpSource([smoke("fx")], include_config=False)
    yield source
    source.close()


def test_precedence_is_builtin_then_wasm_then_extension():
    registry = ToolRegistry(builtins=[make_tool("shared", "builtin")], mcp_source=False)
    registry.register_wasm([make_tool("shared", "wasm"), make_tool("w", "wasm")])
    registry.register_extension(lambda cwd: [make_tool("shared", "ext"), make_tool("w", "ext")])
    tools = {t.name: t for t in registry.get_tools()}
    assert tools["shared"].call().text == "builtin"
    assert tools["w"].call().text == "wasm"
    report = registry.conflict_report()
    assert [(c.name, c.winner, c.shadowed) for c in report.conflicts] == [
        ("shared", "builtin", "wasm"),
        ("shared", "builtin", "extension"),
        ("w", "wasm", "extension"),
    ]
    assert report.to_dict()["shadowed_count"] == 3
    assert report.to_dict()["builtin_count"] == 1 and report.to_dict()["wasm_count"] == 1


def test_an_mcp_tool_named_like_a_builtin_is_shadowed_and_reported(mcp_source):
    registry = ToolRegistry(builtins=[make_tool("mcp_fx_echo", "builtin")], mcp_source=mcp_source)
    tools = {t.name: t for t in registry.get_tools()}
    assert tools["mcp_fx_echo"].call({"message": "x"}).text == "builtin"
    assert tools["mcp_fx_fail"].origin == "mcp"
    report = registry.conflict_report().to_dict()
    assert {
        "name": "mcp_fx_echo",
        "winner": "builtin",
        "winner_provider": "builtin",
        "shadowed": "mcp",
        "shadowed_provider": "mcp",
    } in report["conflicts"]
    assert report["mcp_count"] == 5  # six MCP tools, one shadowed
    assert report["total_tools"] == 6


def test_mcp_tools_join_the_registry_and_can_be_left_out(mcp_source):
    registry = ToolRegistry(builtins=[], mcp_source=mcp_source)
    assert registry.conflict_report().mcp_count >= 6
    assert registry.get_tool("mcp_fx_echo").call({"message": "r"}).text == "echo:r"  # type: ignore[union-attr]
    assert registry.get_tools(include_mcp=False) == []


def test_a_broken_provider_costs_only_its_own_tools():
    registry = ToolRegistry(builtins=[make_tool("b", "builtin")], mcp_source=False)

    def explode(cwd: Path) -> list[Tool]:
        raise RuntimeError("provider exploded")

    registry.register_extension(explode, name="bad-ext")
    registry.register_extension([make_tool("good", "ext")], name="good-ext")
    registry.register_wasm(lambda cwd: ["not a tool"], name="odd-wasm")  # type: ignore[list-item]
    assert sorted(t.name for t in registry.get_tools()) == ["b", "good"]
    errors = registry.conflict_report().load_errors
    assert {e["provider"] for e in errors} == {"bad-ext", "odd-wasm"}
    assert any("provider exploded" in e["error"] for e in errors)


def test_providers_see_the_working_directory(tmp_path):
    seen: list[Path] = []
    registry = ToolRegistry(builtins=[], mcp_source=False)
    registry.register_extension(lambda cwd: seen.append(cwd) or [])
    registry.get_tools(tmp_path)
    assert seen == [tmp_path]


def test_extension_tools_are_ordered_by_name():
    registry = ToolRegistry(builtins=[], mcp_source=False)
    registry.register_extension([make_tool("zeta", "z"), make_tool("alpha", "a")])
    assert [t.name for t in registry.get_tools()] == ["alpha", "zeta"]


def test_mcp_failure_is_a_load_error_not_an_exception(monkeypatch):
    class Broken:
        def discover_tools(self, cwd: object = None) -> list[Tool]:
            raise RuntimeError("mcp is down")

    registry = ToolRegistry(builtins=[make_tool("b", "x")], mcp_source=Broken())  # type: ignore[arg-type]
    assert [t.name for t in registry.get_tools()] == ["b"]
    assert registry.conflict_report().load_errors[0]["provider"] == "mcp"


def test_the_default_registry_uses_the_configured_mcp_servers(project):
    from lemon_skills import settings
    from lemon_skills.mcp.source import reset_default_source

    settings.configure(mcp_servers=[smoke("cfg")])
    try:
        names = {t.name for t in ToolRegistry(builtins=[]).get_tools(project)}
        assert "mcp_cfg_echo" in names
    finally:
        reset_default_source()
        settings.reset()


def test_search_mode_defers_mcp_tools_behind_tool_search():
    from lemon_skills.tool import to_anthropic, to_openai

    source = McpSource([smoke("fx", always_load=["fail"])], include_config=False)
    try:
        registry = ToolRegistry(builtins=[make_tool("builtin", "a built-in")], mcp_source=source)
        everything = registry.select_tools(mode="all")
        sel = registry.select_tools(request="echo a message", mode="search", top_k=1)
        sent = [t.name for t in sel.tools]
        assert sent == ["builtin", "mcp_fx_echo", "mcp_fx_fail", "tool_search"]
        assert sel.tokens_sent < everything.tokens_sent == sel.tokens_all
        assert set(sel.deferred) == {t.name for t in everything.tools} - set(sent)
        # A budget the definitions fit comfortably in keeps every tool; a small one defers.
        assert registry.select_tools(budget=100 * sel.tokens_all).mode == "all"
        assert registry.select_tools(budget=sel.tokens_all, request="echo").mode == "search"
        found = next(t for t in sel.tools if t.name == "tool_search").call(
            {"query": "read a resource"}
        )
        loaded = [registry.get_tool(n) for n in found.details["names"]]
        assert loaded and all(t is not None for t in loaded)
        assert found.details["openai"] == to_openai(loaded)  # type: ignore[arg-type]
        assert found.details["anthropic"] == to_anthropic(loaded)  # type: ignore[arg-type]
    finally:
        source.close()
