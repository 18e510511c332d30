from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.mcp.catalog.toolsearch import (
    build_tool_index,
    find_tools,
    load_tool_file,
    rank_tools,
)
from lemon_skills.search import embed
from tests.helpers.mcp import rich

pytestmark = pytest.mark.usefixtures("in_memory")

TOOLS = [
    {
        "server": "github",
        "name": "merge_pull_request",
        "description": "Merge a pull request",
        "inputSchema": {
            "type": "object",
            "properties": {"pull_number": {"type": "number", "description": "Pull request number"}},
        },
    },
    {
        "server": "github",
        "name": "create_issue",
        "description": "Create a new issue in a GitHub repository",
    },
    {
        "server": "mapbox",
        "name": "ReverseGeocodeTool",
        "title": "Reverse geocode",
        "description": "Find the address at a point.",
        "inputSchema": {
            "type": "object",
            "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
        },
    },
    {
        "server": "git",
        "name": "git_status",
        "description": "Shows the working tree status",
        "instructions": "Local git repositories: commits, branches, staging area.",
    },
    {"server": "git", "name": "git_log", "description": "Shows the commit logs"},
]


@pytest.fixture
def index(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in TOOLS) + "\n", encoding="utf-8")
    specs, instructions = load_tool_file(path)
    return build_tool_index(specs, instructions)


def names(index, request: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.spec.name for m in rank_tools(index, request)]


def test_an_exact_tool_name_comes_first(index):  # type: ignore[no-untyped-def]
    assert names(index, "git_log")[0] == "mcp_git_git_log"
    assert names(index, "mcp_github_create_issue")[0] == "mcp_github_create_issue"
    assert names(index, "ReverseGeocodeTool")[0] == "mcp_mapbox_reversegeocodetool"


def test_names_are_split_and_parameters_and_instructions_count(index):  # type: ignore[no-untyped-def]
    assert names(index, "reverse geocode latitude longitude")[0] == "mcp_mapbox_reversegeocodetool"
    assert names(index, "merge the pull request")[0] == "mcp_github_merge_pull_request"
    top = rank_tools(index, "working tree status of the local repositories")[0]
    assert top.spec.name == "mcp_git_git_status"
    assert "term:repositori" in top.parts  # from the server's instructions only
    assert "evidence" in top.parts and "coverage" in top.parts


def test_nonsense_gets_no_tool(index):  # type: ignore[no-untyped-def]
    assert rank_tools(index, "zorblax quuxification") == []
    assert rank_tools(index, "") == []


def test_a_malformed_tool_file_names_the_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"server": "a", "name": "t"}\n{"name": "no server"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.jsonl:2"):
        load_tool_file(bad)


def test_find_tools_ranks_the_cached_catalogue_and_never_a_blocked_tool(make_source):
    source = make_source([rich("rich", block_tools=["echo"])])
    assert find_tools("echo a message", source=source) == []  # nothing discovered: no start
    assert source.status()["servers"]["rich"]["state"] == "pending"
    source.discover_tools()
    found = [m.spec.name for m in find_tools("echo", source=source, max_results=20)]
    assert "mcp_rich_echo" not in found
    weather = find_tools("structured weather for a city", source=source)
    assert weather and weather[0].spec.name == "mcp_rich_structured"
    assert find_tools("structured", source=source, servers=["other"]) == []


@pytest.mark.integration
def test_semantic_ranking_finds_a_tool_sharing_no_word_with_the_request(index):  # type: ignore[no-untyped-def]
    request = "file a bug report about the crash"
    assert names(index, request) == []
    found = [m.spec.name for m in rank_tools(index, request, semantic=True)]
    assert found[0] == "mcp_github_create_issue"
    assert rank_tools(index, "bake a chocolate cake", semantic=True) == []


def test_semantic_tool_search_without_the_model_is_a_clear_error(index, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(embed, "MODEL_PACKAGE", "lemon_skills_no_such_model")
    with pytest.raises(ConfigError) as err:
        rank_tools(index, "merge the pull request", semantic=True)
    assert "pip install" in (err.value.hint or "")
    assert names(index, "merge the pull request")[0] == "mcp_github_merge_pull_request"


def test_a_terse_request_naming_a_tool_is_answered(tmp_path: Path):
    tools = [
        {"server": "browser", "name": "pagespeed_report", "description": "Audit a page."},
        {"server": "browser", "name": "navigate", "description": "Open an https URL."},
        {"server": "shop", "name": "list_orders", "description": "List the orders."},
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in tools) + "\n", encoding="utf-8")
    index = build_tool_index(*load_tool_file(path))
    # Only "pagespeed" is the tool's; "https" and "shop" are other tools' words.
    assert names(index, "pagespeed https://shop.acme.test")[0] == "mcp_browser_pagespeed_report"
    # One word of several, held by a tool that it does not name, is no answer.
    assert names(index, "page https") == []
