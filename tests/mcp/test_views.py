"""What each directory sees: its servers and catalogue, one connection per server however many
directories use it, readable errors for unknown tools, and a status without I/O."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemon_skills.errors import McpToolError
from tests.helpers.mcp import rich, smoke

pytestmark = pytest.mark.usefixtures("in_memory", "trusted_projects")


def project_with(root: Path, name: str, servers: list[dict[str, object]]) -> Path:
    where = root / name
    (where / ".git").mkdir(parents=True)
    (where / ".lemon").mkdir()
    (where / ".lemon" / "mcp.json").write_text(json.dumps({"servers": servers}))
    return where


def test_unknown_names_get_the_closest_tools_or_the_naming_rule(make_source):
    source = make_source([smoke("fx")])
    source.discover_tools()
    with pytest.raises(McpToolError, match="unknown MCP tool 'mcp_fx_echoo'") as err:
        source.call_tool("mcp_fx_echoo")
    assert err.value.hint == "did you mean mcp_fx_echo, mcp_fx_fail?"
    with pytest.raises(McpToolError) as err:
        source.call_tool("weather_now")
    assert err.value.hint == "MCP tool names are mcp_<server>_<tool>; the servers here are: fx"


def test_a_tool_of_a_server_that_is_down_says_so(make_source):
    source = make_source([smoke("fx"), {"name": "ghost", "command": "lemon-test-no-such"}])
    source.discover_tools()
    with pytest.raises(McpToolError, match="server 'ghost' is down .executable not found"):
        source.call_tool("mcp_ghost_anything")


def test_utilities_need_their_parameters(make_source):
    source = make_source([rich("rich")])
    source.discover_tools()
    with pytest.raises(McpToolError, match="missing parameter 'uri'"):
        source.call_tool("mcp_rich_resource_read", {"uri": ""})
    with pytest.raises(McpToolError, match="missing parameter 'name'"):
        source.call_tool("mcp_rich_prompt_get", {})


def test_directories_share_a_server_configured_for_both_and_keep_their_own(make_source, tmp_path):
    one = project_with(tmp_path, "one", [smoke("shared"), smoke("mine")])
    two = project_with(tmp_path, "two", [smoke("shared")])
    source = make_source(include_config=True)
    first = {t.name for t in source.discover_tools(one)}
    second = {t.name for t in source.discover_tools(two)}
    assert {"mcp_shared_echo", "mcp_mine_echo"} <= first
    assert "mcp_shared_echo" in second and "mcp_mine_echo" not in second
    assert source.call_tool("mcp_mine_echo", {"message": "m"}, cwd=two).text == "echo:m"


def test_status_counts_what_the_filters_leave_and_lists_disabled_entries(make_source):
    source = make_source(
        [
            rich("rich", allow_resources=["Status"], block_prompts=["other"]),
            smoke("off", enabled=False),
        ]
    )
    source.discover_tools()
    status = source.status()
    rich_row, off = status["servers"]["rich"], status["servers"]["off"]
    assert (rich_row["resource_count"], rich_row["prompt_count"]) == (1, 1)
    assert rich_row["policy"]["pinning"] == "withhold" and rich_row["held_tools"] == []
    assert (off["state"], off["connected"], off["tool_count"]) == ("disabled", False, 0)
    assert status["config_errors"] == [] and status["conflicts"] == []
