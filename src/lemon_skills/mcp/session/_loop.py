"""An event loop for synchronous callers that runs in the caller's own thread.

Why not a background loop thread: a blocking hand-off to another thread and back costs about
0.1 ms per call here (two thread wake-ups), which alone is over the 5 % budget on a 1.7 ms MCP
call. Instead the loop is kept between calls and driven by whichever thread calls in
(``run_until_complete`` costs about 10 microseconds); its tasks (the manager and one task per
server, inside one task group) simply pause while no call is running. When a second thread
calls while the loop is being driven, its coroutine is handed to the running loop and the
driving thread keeps the loop going until that guest finishes too.

Consequences, accepted: server notifications and the periodic refresh are processed only while
some call runs (refresh work that fell due meanwhile runs at the next call), and a sync call
made from inside a running event loop is refused (use the ``a``-prefixed async methods).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from lemon_skills.errors import UsageError

T = TypeVar("T")


class SyncLoop:
    """Runs coroutines to completion on one private, persistent asyncio loop."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._state = threading.Lock()
        self._driving = threading.Lock()
        self._driver: object | None = None
        self._guests = 0
        self._guest_done: asyncio.Event | None = None
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop (for identity checks; never run it directly)."""
        return self._loop

    @property
    def closed(self) -> bool:
        return self._closed

    def run(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn()`` on the loop and return its result.

        Raises:
            UsageError: called from a thread that is running another event loop, or after
                ``close()``.
        """
        self._check_caller()
        with self._state:
            if self._closed:
                raise UsageError("this MCP source is closed")
            if self._driver is not None:
                self._guests += 1
                future = asyncio.run_coroutine_threadsafe(self._as_guest(fn), self._loop)
            else:
                token = self._driver = object()
                future = None
        if future is not None:
            result: T = future.result()
            return result
        with self._driving:
            try:
                return self._loop.run_until_complete(self._drive(fn, token))
            finally:
                with self._state:
                    if self._driver is token:
                        self._driver = None

    def close(self, shutdown: Callable[[], Awaitable[None]] | None = None) -> None:
        """Run ``shutdown()`` (if given), finish pending async generators and close the loop."""
        if self._closed:
            return
        if shutdown is not None:
            self.run(shutdown)
        with self._state:
            self._closed = True
        with self._driving:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    async def _drive(self, fn: Callable[[], Awaitable[T]], token: object) -> T:
        try:
            return await fn()
        finally:
            await self._wait_for_guests(token)

    async def _wait_for_guests(self, token: object) -> None:
        # "No guests left, stop driving" is decided under the state lock, so a thread that
        # arrives afterwards becomes the next driver (waiting for ``_driving``) instead of a
        # guest stranded on a loop nobody runs.
        while True:
            with self._state:
                if self._guests == 0:
                    if self._driver is token:
                        self._driver = None
                    return
                if self._guest_done is None:
                    self._guest_done = asyncio.Event()
                event = self._guest_done
            await event.wait()
            event.clear()

    async def _as_guest(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            return await fn()
        finally:
            with self._state:
                self._guests -= 1
                event = self._guest_done
            if event is not None:
                event.set()

    def _check_caller(self) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return
        if running is self._loop:
            raise UsageError("re-entrant synchronous MCP call from inside the MCP event loop")
        raise UsageError(
            "synchronous MCP call from inside a running event loop; "
            "use the async methods (await source.adiscover_tools(), acall_tool(), ...)"
        )
