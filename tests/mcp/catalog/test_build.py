"""Utility tools (resources_list/resource_read, prompts_list/prompt_get) are offered only when
the server's filters leave something they could return."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import types

from lemon_skills.mcp.catalog.build import CatalogEntry, build
from lemon_skills.mcp.config.entries import Filters
from lemon_skills.mcp.session.handle import Listing
from lemon_skills.mcp.source import McpSource
from tests.helpers.mcp import rich

pytestmark = pytest.mark.usefixtures("in_memory", "trusted_projects")

RESOURCE_TOOLS = {"resources_list", "resource_read"}
PROMPT_TOOLS = {"prompts_list", "prompt_get"}


def utilities(source: McpSource, server: str) -> set[str]:
    prefix = f"mcp_{server}_"
    names = {t.name.removeprefix(prefix) for t in source.discover_tools()}
    return names & (RESOURCE_TOOLS | PROMPT_TOOLS)


def test_prompt_tools_go_when_every_prompt_is_blocked(make_source):
    source = make_source([rich("rich", block_prompts=["brief", "other"])])
    assert utilities(source, "rich") == RESOURCE_TOOLS
    status = source.status()["servers"]["rich"]
    assert status["prompt_count"] == 0 and status["tool_count"] == len(source.discover_tools())


def test_resource_tools_go_when_the_allow_list_matches_no_resource(make_source):
    source = make_source([rich("rich", allow_resources=["fixture://nothing-like-this"])])
    assert utilities(source, "rich") == PROMPT_TOOLS
    assert "mcp_rich_echo" in {t.name for t in source.discover_tools()}


def test_a_partial_filter_keeps_the_utilities(make_source):
    source = make_source([rich("rich", allow_resources=["Status"], block_prompts=["other"])])
    assert utilities(source, "rich") == RESOURCE_TOOLS | PROMPT_TOOLS
    prompts = json.loads(source.call_tool("mcp_rich_prompts_list").text)
    assert [p["name"] for p in prompts] == ["brief"]


def test_changing_the_filters_in_mcp_json_brings_the_utilities_back(project: Path):
    config = project / ".lemon" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"servers": [rich("rich", block_prompts=["brief", "other"])]}))
    with McpSource(cwd=project) as source:
        assert utilities(source, "rich") == RESOURCE_TOOLS
        config.write_text(json.dumps({"servers": [rich("rich", block_prompts=["other"])]}))
        assert utilities(source, "rich") == RESOURCE_TOOLS | PROMPT_TOOLS
        assert source.call_tool("mcp_rich_prompt_get", {"name": "brief"}).text


def entry(listing: Listing, **filters: tuple[str, ...]) -> CatalogEntry:
    return CatalogEntry(server="s", key="s-1", filters=Filters(**filters), listing=listing)


def kinds(e: CatalogEntry) -> set[str]:
    specs, _ = build([e])
    return {s.kind for s in specs} - {"tool"}


def test_templates_alone_keep_the_resource_tools_and_a_failed_listing_keeps_its_tools():
    caps = {"tools": True, "resources": True, "prompts": True}
    template = types.ResourceTemplate(name="day", uri_template="fixture://day/{n}")
    listing = Listing(templates=(template,), capabilities=caps)
    assert kinds(entry(listing)) == RESOURCE_TOOLS
    assert kinds(entry(listing, block_resources=("day",))) == set()
    # Nothing is known to be empty when the listing failed: the live call may still answer.
    failed = Listing(capabilities=caps, problems=("prompts/list failed: boom",))
    assert kinds(entry(failed)) == PROMPT_TOOLS
    # Without the capability there is nothing to offer, whatever was listed.
    prompt = types.Prompt(name="brief")
    assert kinds(entry(Listing(prompts=(prompt,), capabilities={"tools": True}))) == set()
    assert kinds(entry(Listing(prompts=(prompt,), capabilities=caps))) == PROMPT_TOOLS


def test_always_load_marks_the_pinned_tools_and_titles_are_kept():
    tools = tuple(
        types.Tool(name=n, title=f"{n} title", input_schema={"type": "object"})
        for n in ("status", "log")
    )
    listing = Listing(tools=tools)
    one = CatalogEntry(
        server="git", key="g", filters=Filters(), listing=listing, always_load=("status",)
    )
    specs, _ = build([one])
    assert {s.target: s.always_load for s in specs} == {"status": True, "log": False}
    assert {s.title for s in specs} == {"status title", "log title"}
    every = CatalogEntry(
        server="git", key="g", filters=Filters(), listing=listing, always_load=("*",)
    )
    assert all(s.always_load for s in build([every])[0])


def test_the_catalogue_keeps_server_instructions_and_pins_without_starting_servers(make_source):
    source = make_source([rich("rich", always_load=["echo"])])
    assert source.catalogue() is None  # nothing discovered yet, and asking starts nothing
    assert source.status()["servers"]["rich"]["state"] == "pending"
    source.discover_tools()
    view = source.catalogue()
    assert view is not None
    assert view.instructions == {"rich": "A fixture for weather lookups and echoes."}
    assert [s.name for s in view.specs if s.always_load] == ["mcp_rich_echo"]
