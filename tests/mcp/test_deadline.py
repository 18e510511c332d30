from __future__ import annotations

import anyio

from lemon_skills.mcp.deadline import Deadline


def test_block_that_outlives_the_timeout_is_ended_and_says_why():
    deadline = Deadline(timeout_s=0.01, max_total_s=10)

    async def hang():
        finished = False
        with deadline.scope() as scope:
            await anyio.Event().wait()
            finished = True
        return finished, scope.cancelled_caught, deadline.reason()

    assert anyio.run(hang) == (False, True, "timed out after 0.01 s")


def test_block_that_finishes_in_time_returns_normally():
    async def quick():
        with Deadline(timeout_s=5, max_total_s=10).scope() as scope:
            await anyio.lowlevel.checkpoint()
        return scope.cancelled_caught

    assert anyio.run(quick) is False


def test_progress_keeps_a_request_alive_past_its_timeout_until_the_cap():
    # The server reports progress 25 times per timeout, so only a stall of nearly a whole
    # timeout (a quarter of a second) could end the request before its cap.
    deadline = Deadline(timeout_s=0.25, max_total_s=0.75)

    async def chatty_server():
        start = anyio.current_time()
        reports = 0
        with deadline.scope() as scope:
            while True:  # reports progress every 10 ms, forever
                await deadline.progress(1, None, None)
                reports += 1
                await anyio.sleep(0.01)
        return scope.cancelled_caught, anyio.current_time() - start, deadline.reason(), reports

    ended, elapsed, reason, reports = anyio.run(chatty_server)
    assert ended
    assert elapsed >= 0.75  # three timeouts long: progress pushed it back until the cap
    assert reason == "ran for the maximum of 0.75 s (max_total_timeout_ms)"
    assert reports > 3


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
