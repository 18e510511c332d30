"""The exact allow/block rule."""

from __future__ import annotations

from lemon_skills.mcp.catalog.filters import allowed, prompt_allowed, resource_allowed, tool_allowed
from lemon_skills.mcp.config.entries import Filters


def test_empty_lists_allow_everything():
    assert allowed(["x"], (), ())


def test_allow_list_is_exact():
    f = Filters(allow_tools=("echo",))
    assert tool_allowed(f, "echo")
    assert not tool_allowed(f, "echo2")
    assert not tool_allowed(f, "ECHO")


def test_block_wins_over_allow():
    f = Filters(allow_prompts=("brief",), block_prompts=("brief",))
    assert not prompt_allowed(f, "brief")


def test_a_resource_is_matched_by_uri_or_name():
    by_name = Filters(allow_resources=("Status",))
    assert resource_allowed(by_name, "fixture://status", "Status")
    assert not resource_allowed(by_name, "fixture://status", None)
    blocked = Filters(block_resources=("Status",))
    assert not resource_allowed(blocked, "fixture://status", "Status")
    assert resource_allowed(Filters(allow_resources=("fixture://status",)), "fixture://status")
