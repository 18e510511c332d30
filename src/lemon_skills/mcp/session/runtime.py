"""Where an ``McpSource``'s sessions live, and how calls reach them from sync or async code.

``Runtime.enter()`` (from ``async with``) runs the manager in the caller's event loop, with
servers reconnecting on their own and a periodic refresh. Otherwise the first call starts a
``SyncLoop`` whose main task owns the manager; synchronous callers drive it (see ``_loop.py``),
asynchronous callers from a foreign loop reach it through a worker thread (driving the loop
from the calling thread costs about 10 microseconds per call, a background loop thread about
100). Forgotten sync runtimes are closed by an exit hook, so no server process outlives the
program; in sync mode the periodic refresh is evaluated at each call (nothing runs between
calls). Tool objects made here run their calls the same way.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from lemon_skills.errors import UsageError
from lemon_skills.mcp.catalog.build import ToolSpec
from lemon_skills.mcp.catalog.calls import SourceCore
from lemon_skills.mcp.catalog.views import View
from lemon_skills.mcp.session._loop import SyncLoop
from lemon_skills.mcp.session.manager import McpManager
from lemon_skills.tool import Tool, ToolContext, ToolResult

T = TypeVar("T")
CoreFactory = Callable[[McpManager], SourceCore]
Job = Callable[[], Coroutine[Any, Any, T]]


class Runtime:
    """Owns the manager and the ``SourceCore`` for one source."""

    def __init__(
        self,
        make_core: CoreFactory,
        manager_kwargs: dict[str, Any],
        refresh_interval_s: float,
    ) -> None:
        self._make_core = make_core
        self._manager_kwargs = manager_kwargs
        self._interval = refresh_interval_s
        self.core: SourceCore | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.sync: SyncLoop | None = None
        self._owned: McpManager | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._stop: asyncio.Event | None = None
        self._main: asyncio.Task[None] | None = None
        self._start_lock = threading.Lock()
        self._tools: dict[tuple[Path, int], list[Tool]] = {}

    @property
    def owned(self) -> bool:
        """Running inside a caller's ``async with``."""
        return self._owned is not None

    def in_owner_loop(self) -> bool:
        """Whether the current thread is running the owning event loop."""
        return self.loop is not None and running_loop() is self.loop

    def need_core(self) -> SourceCore:
        """The running core.

        Raises:
            UsageError: the source is closed.
        """
        if self.core is None:
            raise UsageError("this McpSource is closed")
        return self.core

    async def enter(self) -> None:
        """Start in the current event loop (structured: the caller's task owns everything)."""
        if self.core is not None:
            raise UsageError("this McpSource is already running")
        manager = McpManager(auto_retry=True, **self._manager_kwargs)
        await manager.__aenter__()
        self._owned = manager
        self.core = self._make_core(manager)
        self._token = anyio.lowlevel.current_token()
        self.loop = running_loop()
        manager.start_soon(self._ticker)

    async def exit(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop every server started by ``enter``."""
        manager, self._owned, self.core, self._token, self.loop = (
            self._owned,
            None,
            None,
            None,
            None,
        )
        if manager is not None:
            await manager.__aexit__(exc_type, exc, tb)

    async def arun(self, fn: Job[T]) -> T:
        """Run ``fn()`` where the sessions live, from async code."""
        if self._owned is not None:
            if self.in_owner_loop():
                return await fn()
            token = self._token
            return await anyio.to_thread.run_sync(lambda: anyio.from_thread.run(fn, token=token))
        return await anyio.to_thread.run_sync(self.run, fn)

    def run(self, fn: Job[T]) -> T:
        """Run ``fn()`` where the sessions live, from sync code.

        Raises:
            UsageError: called from the owning event loop (use the async methods).
        """
        if self._owned is not None:
            if self.in_owner_loop():
                raise UsageError("use the async methods inside `async with McpSource()`")
            return anyio.from_thread.run(fn, token=self._token)
        return self._ensure_sync().run(fn)

    def close(self) -> None:
        """Stop every server of the sync runtime and release its loop (idempotent)."""
        loop = self.sync
        if loop is None or loop.closed:
            return
        loop.close(self._shutdown)
        self.core = None

    def tools(self, view: View) -> list[Tool]:
        """Tool objects for ``view``'s specs, made once per catalogue version; their handlers
        run each call where the sessions live (a coroutine inside ``async with``)."""
        key = (view.cwd, view.generation)
        tools = self._tools.get(key)
        if tools is None:
            self._tools = {k: v for k, v in self._tools.items() if k[0] != view.cwd}
            tools = self._tools[key] = [self._make_tool(s) for s in view.specs]
        return list(tools)

    def _make_tool(self, spec: ToolSpec) -> Tool:
        core = self.need_core()
        handler: Any
        if self.owned:

            async def handler(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
                return await self.arun(lambda: core.invoke(spec, params))

        else:

            def handler(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
                return self.run(lambda: core.invoke(spec, params))

        return Tool(
            name=spec.name,
            description=spec.description,
            parameters=spec.input_schema,
            handler=handler,
            label=spec.label,
            origin="mcp",
        )

    def _ensure_sync(self) -> SyncLoop:
        with self._start_lock:
            if self.sync is None or self.sync.closed:
                self.sync = SyncLoop()
                self.sync.run(self._start)
                _register_exit(self)
            return self.sync

    async def _start(self) -> None:
        started = asyncio.Event()
        self._stop = asyncio.Event()
        self._main = asyncio.get_running_loop().create_task(self._serve(started))
        await started.wait()

    async def _serve(self, started: asyncio.Event) -> None:
        assert self._stop is not None
        async with McpManager(auto_retry=False, **self._manager_kwargs) as manager:
            self.core = self._make_core(manager)
            started.set()
            await self._stop.wait()

    async def _shutdown(self) -> None:
        if self._stop is not None and self._main is not None:
            self._stop.set()
            await self._main

    async def _ticker(self) -> None:
        while True:
            await anyio.sleep(self._interval)
            if self.core is not None:
                await self.core.refresh_expired()


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_open: weakref.WeakSet[Runtime] = weakref.WeakSet()


def _register_exit(runtime: Runtime) -> None:
    _open.add(runtime)
    _install_exit_hook()


@functools.cache
def _install_exit_hook() -> None:
    atexit.register(_close_all)


def _close_all() -> None:
    for runtime in list(_open):
        # Interpreter exit: a failure to close one source must not stop the others.
        with contextlib.suppress(Exception):
            runtime.close()
