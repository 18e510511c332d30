from __future__ import annotations

import anyio

from lemon_skills.mcp.session.deadline import Deadline, Timekeeper


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


def _with_keeper(body):
    """Run ``body(keeper)`` with a running ``Timekeeper``; its result."""

    async def main():
        keeper = Timekeeper()
        async with anyio.create_task_group() as tg:
            tg.start_soon(keeper.run)
            await anyio.sleep(0)  # let it start
            out = await body(keeper, tg)
            tg.cancel_scope.cancel()
        return out

    return anyio.run(main)


async def _hang_watched(keeper, deadline, *, report_every=None):
    """Hang (reporting progress every ``report_every`` s) until the keeper ends the block;
    how long that took, and whether the deadline's scope did it."""
    start = anyio.current_time()
    try:
        with keeper.watch(deadline) as scope:
            while True:
                if report_every is None:
                    await anyio.Event().wait()
                await deadline.progress(1, None, None)
                await anyio.sleep(report_every)
    finally:
        keeper.release(deadline)
    return scope.cancelled_caught, anyio.current_time() - start


def test_a_request_due_sooner_than_one_already_watched_ends_on_time():
    # The keeper sleeps until the first request's deadline (30 s); the second is due in
    # 0.1 s and must not wait for that.
    async def body(keeper, tg):
        slow = Deadline(timeout_s=30, max_total_s=60)
        slow_ended = anyio.Event()

        async def slow_request():
            await _hang_watched(keeper, slow)
            slow_ended.set()

        tg.start_soon(slow_request)
        await anyio.sleep(0.01)
        ended, elapsed = await _hang_watched(keeper, Deadline(timeout_s=0.1, max_total_s=1))
        return ended, elapsed, slow_ended.is_set(), slow.reason()

    ended, elapsed, slow_ended, _ = _with_keeper(body)
    assert ended and 0.1 <= elapsed < 2
    assert not slow_ended  # the other request is still running


def test_progress_keeps_a_watched_request_alive_until_the_cap():
    async def body(keeper, tg):
        deadline = Deadline(timeout_s=0.25, max_total_s=0.75)
        ended, elapsed = await _hang_watched(keeper, deadline, report_every=0.01)
        return ended, elapsed, deadline.reason()

    ended, elapsed, reason = _with_keeper(body)
    assert ended and elapsed >= 0.75
    assert reason == "ran for the maximum of 0.75 s (max_total_timeout_ms)"


def test_a_request_in_flight_when_the_keeper_stops_still_times_out():
    async def main():
        keeper, deadline, out = Timekeeper(), Deadline(timeout_s=0.3, max_total_s=1), {}

        async def request():
            start = anyio.current_time()
            with keeper.watch(deadline) as scope:
                await anyio.sleep(5)
            keeper.release(deadline)
            out.update(ended=scope.cancelled_caught, elapsed=anyio.current_time() - start)

        async with anyio.create_task_group() as tg, anyio.create_task_group() as keeper_tg:
            keeper_tg.start_soon(keeper.run)
            await anyio.sleep(0)
            tg.start_soon(request)
            await anyio.sleep(0.05)
            keeper_tg.cancel_scope.cancel()  # e.g. its manager is shutting down
        return out

    out = anyio.run(main)
    assert out["ended"] and 0.3 <= out["elapsed"] < 3
