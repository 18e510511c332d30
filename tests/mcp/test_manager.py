"""The manager of every server session: one handle per entry, connection attempts with a
doubling backoff, per-server failures, requests and their errors, retiring a server."""

from __future__ import annotations

import anyio
import pytest

from lemon_skills.errors import McpToolError, UsageError
from lemon_skills.mcp.config.entries import StdioServer
from lemon_skills.mcp.config.parse import parse_server
from lemon_skills.mcp.session.manager import McpManager
from tests.helpers.mcp import in_process, rich

RICH = parse_server(rich("rich"))
MISSING = StdioServer(name="missing", command="lemon-test-no-such-command")


def manager(**kw: object) -> McpManager:
    return McpManager(auto_retry=False, transport_factory=in_process, **kw)  # type: ignore[arg-type]


def test_one_handle_per_entry_and_a_changed_entry_is_another_server():
    async def main() -> None:
        async with manager() as mgr:
            first = mgr.ensure(RICH)
            assert mgr.ensure(RICH) is first
            assert first.key == f"rich-{RICH.digest()}"
            other = mgr.ensure(parse_server(rich("rich", timeout_ms=5)))
            assert other is not first and set(mgr.handles) == {first.key, other.key}
            mgr.retire(first.key)
            with anyio.fail_after(5):
                while first.state != "stopped":
                    await first.changed.wait()
            assert set(mgr.handles) == {other.key}

    anyio.run(main)


def test_a_failed_server_waits_out_a_doubling_backoff_unless_forced():
    async def main() -> None:
        async with manager(backoff_base_s=30.0, backoff_max_s=100.0) as mgr:
            good, bad = mgr.ensure(RICH), mgr.ensure(MISSING)
            await mgr.connect_all([good, bad])
            assert good.connected and good.state == "connected"
            assert bad.state == "failed" and bad.failures == 1
            assert "executable not found" in (bad.last_error or "")
            first_wait = bad.retry_at - anyio.current_time()
            assert 25 < first_wait <= 30
            await mgr.connect_all([bad])  # not due yet: no new attempt
            assert bad.attempts == 1
            await mgr.connect_all([bad], force=True)
            assert (bad.attempts, bad.failures) == (2, 2)
            assert 55 < bad.retry_at - anyio.current_time() <= 60

    anyio.run(main)


def test_requests_run_on_the_session_and_errors_name_the_request():
    async def main() -> None:
        async with manager() as mgr:
            h = mgr.ensure(RICH)
            await mgr.connect_all([h])
            result = await mgr.request(
                h, lambda c: c.call_tool("echo", {"message": "m"}), what="tools/call echo"
            )
            assert result.content[0].text == "echo:m"
            with pytest.raises(McpToolError, match="resources/read failed: ") as err:
                await mgr.request(
                    h, lambda c: c.read_resource("fixture://nothing"), what="resources/read"
                )
            assert err.value.server == "rich"
            with pytest.raises(McpToolError, match=r"tools/call sleep timed out after 0.05 s"):
                await mgr.request(
                    h,
                    lambda c: c.call_tool("sleep", {"seconds": 0.5}),
                    what="tools/call sleep",
                    deadline=mgr.deadline(h.config, 0.05),
                )

    anyio.run(main)


def test_a_server_that_is_down_is_a_tool_error_with_the_reason():
    async def main() -> None:
        async with manager() as mgr:
            h = mgr.ensure(MISSING)
            with pytest.raises(McpToolError, match="not connected .executable not found"):
                await mgr.request(h, lambda c: c.list_tools(), what="tools/list")

    anyio.run(main)


def test_the_manager_is_used_inside_async_with_only():
    with pytest.raises(UsageError, match="outside `async with`"):
        McpManager().ensure(RICH)
