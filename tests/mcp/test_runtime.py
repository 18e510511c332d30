"""Where a source's sessions live: the caller's loop inside ``async with``, else a loop of the
source's own that sync callers drive and async callers reach from any loop."""

from __future__ import annotations

import threading

import anyio
import pytest

from lemon_skills.errors import UsageError
from lemon_skills.mcp.session import runtime
from lemon_skills.mcp.source import McpSource
from tests.helpers.mcp import smoke

pytestmark = pytest.mark.usefixtures("in_memory")


def test_inside_async_with_sync_calls_are_refused_and_a_second_entry_too():
    async def main() -> str:
        async with McpSource([smoke("fx")], include_config=False) as source:
            with pytest.raises(UsageError, match="use the async methods inside"):
                source.call_tool("mcp_fx_echo", {"message": "x"})
            with pytest.raises(UsageError, match="already running"):
                await source.__aenter__()
            return (await source.acall_tool("mcp_fx_echo", {"message": "a"})).text

    assert anyio.run(main) == "echo:a"


def test_a_source_running_in_one_loop_is_reached_from_another_threads_loop():
    results: list[str] = []

    async def main() -> None:
        async with McpSource([smoke("fx")], include_config=False) as source:
            await source.adiscover_tools()

            def other_thread() -> None:
                async def call() -> str:
                    return (await source.acall_tool("mcp_fx_echo", {"message": "b"})).text

                results.append(anyio.run(call))

            worker = threading.Thread(target=other_thread)
            worker.start()
            await anyio.to_thread.run_sync(worker.join)

    anyio.run(main)
    assert results == ["echo:b"]


def test_a_sync_source_serves_async_callers_and_starts_again_after_close():
    source = McpSource([smoke("fx")], include_config=False)
    try:

        async def call() -> str:
            return (await source.acall_tool("mcp_fx_echo", {"message": "c"})).text

        assert anyio.run(call) == "echo:c"
        source.close()
        source.close()  # idempotent
        assert source.call_tool("mcp_fx_echo", {"message": "d"}).text == "echo:d"
    finally:
        source.close()


def test_sources_left_open_are_closed_at_exit():
    source = McpSource([smoke("fx")], include_config=False)
    source.discover_tools()
    assert source.status()["servers"]["fx"]["connected"] is True
    runtime._close_all()
    assert source._rt.sync is not None and source._rt.sync.closed
