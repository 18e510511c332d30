"""McpSource against the SDK fixture servers: naming, filters, results, resources, prompts,
status, sampling, the sync and async facades. The shared source runs once in this process
(in-memory transport) and once against spawned stdio servers; the other tests run in-process
(process behaviour is in ``test_source_stdio.py``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import anyio
import pytest

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.source import McpSource
from lemon_skills.tool import ToolContext
from tests.helpers.mcp import check_sampling_only_when_configured, in_process, rich, smoke


@pytest.fixture(scope="module", params=["in-process", "spawned"])
def shared(request: pytest.FixtureRequest) -> Iterator[McpSource]:
    """One source with the rich fixture twice: plain, and behind filters."""
    source = McpSource(
        [
            rich("rich"),
            rich(
                "filtered",
                allow_tools=["echo"],
                allow_resources=["Status"],
                block_prompts=["other"],
            ),
        ],
        include_config=False,
        transport_factory=in_process if request.param == "in-process" else None,
    )
    yield source
    source.close()


def by_name(source: McpSource) -> dict[str, object]:
    return {t.name: t for t in source.discover_tools()}


def test_discovers_prefixed_tools_and_utilities(shared):
    tools = by_name(shared)
    for suffix in (
        "echo",
        "fail",
        "pid",
        "resources_list",
        "resource_read",
        "prompts_list",
        "prompt_get",
    ):
        assert f"mcp_rich_{suffix}" in tools
    echo = tools["mcp_rich_echo"]
    assert shared.get_tool("mcp_rich_echo") is echo
    assert shared.get_tool("mcp_rich_nope") is None
    assert echo.origin == "mcp"
    assert echo.label == "MCP echo"
    assert echo.parameters["properties"]["message"]["type"] == "string"
    assert echo.to_openai()["function"]["name"] == "mcp_rich_echo"


def test_tool_results_carry_text_errors_images_resources_and_structured_content(shared):
    ok = shared.call_tool("mcp_rich_echo", {"message": "hi"})
    assert (ok.text, ok.is_error) == ("echo:hi", False)
    failed = shared.call_tool("mcp_rich_fail")
    assert failed.is_error and failed.text == "planned failure"
    image = shared.call_tool("mcp_rich_image")
    assert image.content[0]["type"] == "image"
    assert image.content[0]["mime_type"] == "image/png" and image.content[0]["data"]
    structured = shared.call_tool("mcp_rich_structured", {"city": "Oslo"})
    assert structured.details["structured"] == {"city": "Oslo", "celsius": 21}
    embedded = shared.call_tool("mcp_rich_embedded")
    assert embedded.text == "note body"
    assert embedded.content[0]["resource"]["uri"] == "fixture://note"
    assert "fixture://status" in shared.call_tool("mcp_rich_link").text


def test_tool_objects_call_their_server_sync_and_async(shared):
    echo = by_name(shared)["mcp_rich_echo"]
    assert echo.call({"message": "a"}, ToolContext(tool_call_id="t1")).text == "echo:a"

    async def main() -> str:
        return (await echo.acall({"message": "b"})).text

    assert anyio.run(main) == "echo:b"
    bad = echo.call({"message": 3})
    assert bad.is_error and "Invalid parameters" in bad.text


def test_resource_and_prompt_utilities(shared):
    listed = json.loads(shared.call_tool("mcp_rich_resources_list").text)
    assert {r["uri"] for r in listed} == {"fixture://status", "fixture://secret"}
    read = shared.call_tool("mcp_rich_resource_read", {"uri": "fixture://secret"})
    assert read.text == "secret:42"
    prompts = json.loads(shared.call_tool("mcp_rich_prompts_list").text)
    assert {p["name"] for p in prompts} == {"brief", "other"}
    got = json.loads(
        shared.call_tool(
            "mcp_rich_prompt_get", {"name": "brief", "arguments": {"topic": "bees"}}
        ).text
    )
    assert got["description"] == "Write a brief"
    assert got["messages"][0]["content"]["text"] == "Write a brief about bees."


def test_a_resource_allowed_by_name_can_be_listed_and_read(shared):
    listed = json.loads(shared.call_tool("mcp_filtered_resources_list").text)
    assert [r["name"] for r in listed] == ["Status"]
    read = shared.call_tool("mcp_filtered_resource_read", {"uri": "fixture://status"})
    assert read.text == "status:ok"
    with pytest.raises(McpToolError, match="blocked"):
        shared.call_tool("mcp_filtered_resource_read", {"uri": "fixture://secret"})


def test_filters_hide_tools_and_prompts(shared):
    tools = by_name(shared)
    assert "mcp_filtered_echo" in tools and "mcp_filtered_fail" not in tools
    prompts = json.loads(shared.call_tool("mcp_filtered_prompts_list").text)
    assert [p["name"] for p in prompts] == ["brief"]
    with pytest.raises(McpToolError, match="blocked"):
        shared.call_tool("mcp_filtered_prompt_get", {"name": "other"})


def test_status_reports_every_server(shared):
    shared.discover_tools()
    status = shared.status()
    assert status["disabled"] is False
    assert status["cache_ttl_ms"] == 300_000
    assert status["cached_tools"] == len(shared.discover_tools())
    rich_status = status["servers"]["rich"]
    assert rich_status["connected"] is True
    assert rich_status["transport"] == "stdio"
    assert rich_status["capabilities"] == {"tools": True, "resources": True, "prompts": True}
    assert rich_status["resource_count"] == 2 and rich_status["prompt_count"] == 2
    assert rich_status["tool_count"] == 11 + 4  # eleven tools and four utilities
    assert rich_status["last_error"] is None
    filtered = status["servers"]["filtered"]
    assert (filtered["tool_count"], filtered["resource_count"], filtered["prompt_count"]) == (
        5,
        1,
        1,
    )


def test_unknown_tool_names_suggest_close_matches(shared):
    shared.discover_tools()
    with pytest.raises(McpToolError, match="unknown MCP tool") as err:
        shared.call_tool("mcp_rich_ecko")
    assert "mcp_rich_echo" in (err.value.hint or "")


def test_a_down_server_is_not_redialed_before_its_backoff(make_source):
    source = make_source([{"name": "missing", "command": "definitely-not-a-real-mcp-server"}])
    source.discover_tools()
    source.discover_tools(force_refresh=False)
    first = source.status()["servers"]["missing"]
    assert first["failures"] == 1 and first["retry_in_ms"] > 0
    with pytest.raises(McpToolError, match="server 'missing' is down"):
        source.call_tool("mcp_missing_anything")
    source.refresh()
    assert source.status()["servers"]["missing"]["failures"] == 2


def test_both_protocol_eras(make_source, in_memory):
    source = make_source([smoke("modern"), smoke("legacy", protocol="legacy")])
    source.discover_tools()
    servers = source.status()["servers"]
    assert servers["modern"]["protocol_version"] == "2026-07-28"
    assert servers["legacy"]["protocol_version"] == "2025-11-25"
    assert source.call_tool("mcp_legacy_echo", {"message": "old"}).text == "echo:old"


def test_a_disabled_source_has_no_tools(make_source, in_memory):
    source = make_source([rich("x")], disabled=True)
    assert source.discover_tools() == []
    status = source.status()
    assert status["disabled"] is True and status["servers"] == {} and status["cached_tools"] == 0
    with pytest.raises(McpToolError, match=r"MCP is off here \(disabled by the caller\)"):
        source.call_tool("mcp_x_echo")


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_sampling_callback_reaches_servers_that_ask_and_only_when_configured(
    protocol, make_source, in_memory
):
    check_sampling_only_when_configured(make_source, protocol)


def test_async_mode_runs_in_the_callers_event_loop(in_memory):
    async def main() -> tuple[str, str, bool]:
        async with McpSource([smoke("fx")], include_config=False) as source:
            tools = {t.name: t for t in await source.adiscover_tools()}
            direct = await source.acall_tool("mcp_fx_echo", {"message": "a"})
            via_tool = await tools["mcp_fx_echo"].acall({"message": "b"})
            status = await source.astatus()
            return direct.text, via_tool.text, status["servers"]["fx"]["connected"]

    assert anyio.run(main) == ("echo:a", "echo:b", True)


def test_synchronous_calls_from_several_threads(shared):
    shared.discover_tools()
    results: list[str] = []

    def worker(i: int) -> None:
        results.extend(
            shared.call_tool("mcp_rich_echo", {"message": f"{i}-{j}"}).text for j in range(20)
        )

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(f"echo:{i}-{j}" for i in range(4) for j in range(20))
