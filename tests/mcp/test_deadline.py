from __future__ import annotations

import anyio
import pytest

from lemon_skills.mcp.deadline import Deadline


def test_block_that_outlives_the_timeout_raises_timeout_error():
    deadline = Deadline(timeout_s=0.01, max_total_s=10)

    async def hang():
        with pytest.raises(TimeoutError), deadline.running():
            await anyio.Event().wait()
        return deadline.reason()

    assert anyio.run(hang) == "timed out after 0.01 s"


def test_block_that_finishes_in_time_returns_normally():
    async def quick():
        with Deadline(timeout_s=5, max_total_s=10).running():
            await anyio.lowlevel.checkpoint()
        return "done"

    assert anyio.run(quick) == "done"


def test_progress_keeps_a_request_alive_past_its_timeout_until_the_cap():
    deadline = Deadline(timeout_s=0.05, max_total_s=0.15)

    async def chatty_server():
        start = anyio.current_time()
        with pytest.raises(TimeoutError), deadline.running():
            while True:  # reports progress every 20 ms, forever
                await deadline.progress(1, None, None)
                with anyio.move_on_after(0.02):
                    await anyio.Event().wait()
        return anyio.current_time() - start, deadline.reason()

    elapsed, reason = anyio.run(chatty_server)
    assert elapsed >= 0.15
    assert reason == "ran for the maximum of 0.15 s (max_total_timeout_ms)"


def test_progress_reaches_sync_and_async_callbacks():
    seen = []

    async def on_async(progress, total, message):
        seen.append(("async", progress, total, message))

    async def report():
        await Deadline(timeout_s=1, max_total_s=1, on_progress=on_async).progress(1, 2, "half")
        sync = Deadline(timeout_s=1, max_total_s=1, on_progress=lambda *a: seen.append(a))
        await sync.progress(2, None, None)

    anyio.run(report)
    assert seen == [("async", 1, 2, "half"), (2, None, None)]
