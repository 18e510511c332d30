from __future__ import annotations

import asyncio
import threading

import pytest

from lemon_skills.errors import UsageError
from lemon_skills.mcp.session._loop import SyncLoop


@pytest.fixture
def loop():
    sync = SyncLoop()
    yield sync
    sync.close()


def test_run_returns_the_result_and_the_loop_persists_between_calls(loop):
    async def which_loop():
        return asyncio.get_running_loop()

    assert loop.run(which_loop) is loop.run(which_loop) is loop.loop


def test_exceptions_reach_the_caller(loop):
    async def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        loop.run(boom)
    assert loop.run(lambda: asyncio.sleep(0, result="still usable")) == "still usable"


def test_a_second_thread_is_served_while_the_first_drives_the_loop(loop):
    released = asyncio.Event()
    driving = threading.Event()

    async def first():
        driving.set()
        await asyncio.wait_for(released.wait(), timeout=5)
        return "first"

    async def second():
        released.set()  # only runs if the driving thread keeps the loop going for it
        return "second"

    results = {}
    worker = threading.Thread(target=lambda: results.update(a=loop.run(first)))
    worker.start()
    assert driving.wait(5)
    results["b"] = loop.run(second)
    worker.join(5)
    assert results == {"a": "first", "b": "second"}


def test_a_sync_call_from_inside_an_event_loop_is_refused(loop):
    async def inside():
        loop.run(lambda: asyncio.sleep(0))

    with pytest.raises(UsageError, match="use the async methods"):
        asyncio.run(inside())


def test_a_closed_loop_refuses_calls_and_runs_the_shutdown_once():
    sync = SyncLoop()
    calls = []

    async def shutdown():
        calls.append("shutdown")

    sync.close(shutdown)
    sync.close(shutdown)
    assert calls == ["shutdown"] and sync.closed
    with pytest.raises(UsageError, match="closed"):
        sync.run(lambda: asyncio.sleep(0))
