"""Connection lifecycle for many servers: one owner task per server in one task group.

Each server's task opens its session (``connect``), lists what it offers, then holds the
session until the transport ends, the entry is retired or a reconnect is forced. Whatever goes
wrong (missing command, crash, hang, garbage on stdout, HTTP errors) is caught at that task's
boundary, recorded as the server's ``last_error`` and retried with exponential backoff; other
servers never notice. Sending requests on those sessions is ``manager.McpManager``'s part.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Self

import anyio
import httpx2
from mcp import types
from mcp.client.session import ElicitationFnT, SamplingFnT
from mcp.shared.subscriptions import ResourcesListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from lemon_skills.errors import UsageError
from lemon_skills.mcp.config.entries import ServerConfig
from lemon_skills.mcp.oauth.failure import begin_attempt, explain_failure
from lemon_skills.mcp.session.connect import (
    Connection,
    Probe,
    TransportCM,
    connect,
    describe,
    startup_failure,
    startup_timeout,
)
from lemon_skills.mcp.session.deadline import Timekeeper
from lemon_skills.mcp.session.handle import ServerHandle, fetch_listing

AuthFactory = Callable[[ServerConfig], "httpx2.Auth | None"]
SamplingFactory = Callable[[ServerConfig], "SamplingFnT | None"]
ElicitationFactory = Callable[[ServerConfig], "ElicitationFnT | None"]
TransportFactory = Callable[[ServerConfig], "TransportCM | None"]
ProgressFn = Callable[[int, int], None]

#: Extra time a waiter allows beyond a server's ready timeout (teardown of a failed attempt).
_WAIT_GRACE_S = 1.0
#: How long shutdown waits for servers to stop before cancelling what is left.
SHUTDOWN_GRACE_S = 8.0
_LIST_CHANGED = (
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
)


class Lifecycle:
    """Every server's owner task, and the calls that start, stop, reconnect and re-list them
    (``McpManager`` adds the requests; its docstring gives the arguments)."""

    def __init__(
        self,
        *,
        auth_factory: AuthFactory | None = None,
        sampling_factory: SamplingFactory | None = None,
        elicitation_factory: ElicitationFactory | None = None,
        transport_factory: TransportFactory | None = None,
        auto_retry: bool = True,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        client_info: types.Implementation | None = None,
    ) -> None:
        self._auth_factory = auth_factory
        self._sampling_factory = sampling_factory
        self._elicitation_factory = elicitation_factory
        self._transport_factory = transport_factory
        self._auto_retry = auto_retry
        self._backoff = (backoff_base_s, backoff_max_s)
        self._client_info = client_info
        self._handles: dict[str, ServerHandle] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._timekeeper = Timekeeper()

    async def __aenter__(self) -> Self:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._timekeeper.run)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._tg is not None
        handles = list(self._handles.values())
        for key in list(self._handles):
            self.retire(key)
        with anyio.move_on_after(SHUTDOWN_GRACE_S):
            for h in handles:
                while h.state != "stopped":
                    await h.changed.wait()
        self._tg.cancel_scope.cancel()
        tg, self._tg = self._tg, None
        return await tg.__aexit__(exc_type, exc, tb)

    def start_soon(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run a background task (the periodic refresh) inside the manager's task group."""
        if self._tg is None:
            raise UsageError("McpManager used outside `async with`")
        self._tg.start_soon(fn)

    @property
    def handles(self) -> dict[str, ServerHandle]:
        """Live handles by key."""
        return self._handles

    @staticmethod
    def key_of(cfg: ServerConfig) -> str:
        """``<name>-<digest>``: the same name with another config is another server."""
        return f"{cfg.name}-{cfg.digest()}"

    def ensure(self, cfg: ServerConfig) -> ServerHandle:
        """The handle for ``cfg``, starting its (idle) task on first use."""
        key = self.key_of(cfg)
        handle = self._handles.get(key)
        if handle is None:
            if self._tg is None:
                raise UsageError("McpManager used outside `async with`")
            handle = self._handles[key] = ServerHandle(key=key, config=cfg)
            self._tg.start_soon(self._serve, handle, name=f"mcp-server:{key}")
        return handle

    def retire(self, key: str) -> None:
        """Stop a server and forget it; its session is closed in the background."""
        handle = self._handles.pop(key, None)
        if handle is not None:
            handle.stopped = True
            handle.wake.set()
            if handle.scope is not None:
                handle.scope.cancel()
            handle.notify()

    def reconnect(
        self, handle: ServerHandle, *, start: bool = True, reason: str | None = None
    ) -> None:
        """Drop the session now; the next attempt needs no backoff wait.

        With ``start`` the attempt begins at once (the caller awaits it, e.g. ``refresh``);
        otherwise it waits for the next ``connect_all`` unless the manager retries on its own.
        """
        if handle.stopped:
            return
        handle.conn = None
        handle.state = "failed"
        handle.retry_at = anyio.current_time()
        if reason is not None:
            handle.last_error = reason
        if handle.scope is not None:
            handle.scope.cancel()
        if start or self._auto_retry:
            handle.wake.set()
        handle.notify()

    async def connect_all(
        self,
        handles: list[ServerHandle],
        *,
        force: bool = False,
        progress: ProgressFn | None = None,
    ) -> None:
        """Bring up every handle that is down and due (all of them with ``force``); wait for
        each attempt's outcome, bounded by the server's ready timeout."""
        now = anyio.current_time()
        todo = []
        for h in handles:
            if h.stopped or h.connected:
                continue
            due = h.state in ("pending", "connecting") or force or h.retry_due(now)
            if due:
                todo.append((h, h.request_connect()))
        done = [0]

        async def wait(h: ServerHandle, attempt: int) -> None:
            await h.wait_attempt(attempt, h.config.connect_budget_s() + _WAIT_GRACE_S)
            done[0] += 1
            if progress is not None:
                progress(done[0], len(todo))

        async with anyio.create_task_group() as tg:
            for h, attempt in todo:
                tg.start_soon(wait, h, attempt)

    async def refresh(
        self,
        handles: list[ServerHandle],
        *,
        force: bool = False,
        max_age_s: float = math.inf,
        progress: ProgressFn | None = None,
    ) -> None:
        """Re-list connected servers that are stale, older than ``max_age_s`` or all
        (``force``); then reconnect what is down and due (everything down with ``force``)."""
        now = anyio.current_time()
        async with anyio.create_task_group() as tg:
            for h in handles:
                old = now - h.listing.listed_at >= max_age_s
                if h.connected and (force or h.stale or old):
                    tg.start_soon(self.relist, h)
        await self.connect_all(handles, force=force, progress=progress)

    async def relist(self, handle: ServerHandle) -> None:
        """Fetch a fresh listing; a failure means the session is suspect and is reopened."""
        conn = handle.conn
        if conn is None or conn.closed.is_set():
            return
        try:
            with anyio.fail_after(handle.config.ready_timeout_ms / 1000):
                listing = await fetch_listing(conn, now=anyio.current_time())
        except Exception as exc:  # per-server isolation: the failure is this server's status
            handle.last_error = f"listing failed: {_reason(exc)}"
            self.reconnect(handle)
            return
        handle.listing = listing
        handle.version += 1
        handle.stale = False
        handle.notify()

    async def _serve(self, h: ServerHandle) -> None:
        try:
            await h.wake.wait()
            while _alive(h):
                h.wake = anyio.Event()
                await self._attempt(h)
                if not _alive(h):
                    break
                if self._auto_retry and not h.wake.is_set():
                    with anyio.move_on_after(max(0.0, h.retry_at - anyio.current_time())):
                        await h.wake.wait()
                else:
                    await h.wake.wait()
        finally:
            h.state = "stopped"
            h.conn = None
            h.notify()

    async def _attempt(self, h: ServerHandle) -> None:
        h.attempts += 1
        h.hold = False
        h.lost = False
        h.state = "connecting"
        h.notify()
        h.probe = probe = Probe()
        up: list[float] = []
        async with anyio.create_task_group() as watch:
            watch.start_soon(self._watchdog, h, probe)
            with anyio.CancelScope() as scope:
                h.scope = scope
                await self._session(h, probe, up)
            watch.cancel_scope.cancel()
        h.scope = None
        self._down(h, forced=scope.cancel_called, lived=up[0] if up else None)

    async def _session(self, h: ServerHandle, probe: Probe, up: list[float]) -> None:
        """Connect, list and hold the session until it ends; ``up`` gets the time it came up."""
        try:
            async with self._open(h, probe) as conn:
                with anyio.fail_after(h.config.ready_timeout_ms / 1000):
                    listing = await fetch_listing(conn, now=anyio.current_time())
                up.append(anyio.current_time())
                self._up(h, conn, listing)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_listen, h, conn)
                    await conn.closed.wait()
                    tg.cancel_scope.cancel()
                tail = conn.stderr_tail()
                h.last_error = "connection closed by the server" + (
                    f"; stderr: {tail}" if tail else ""
                )
        except Exception as exc:  # per-server isolation: the failure is this server's status
            h.last_error = await explain_failure(h, probe, otherwise=_reason(exc))

    async def _watchdog(self, h: ServerHandle, probe: Probe) -> None:
        """Report a startup timeout at the deadline, not after the slow teardown of the
        attempt (a server that ignores EOF takes seconds to be stopped)."""
        ready_s = h.config.connect_budget_s()
        await anyio.sleep(ready_s)
        if h.state == "connecting":
            h.last_error = startup_failure(startup_timeout(ready_s), probe, h.config)
            h.state = "failed"
            h.notify()

    def _open(self, h: ServerHandle, probe: Probe) -> Any:
        cfg = h.config
        h.auth = auth = self._auth_factory(cfg) if self._auth_factory else None
        begin_attempt(auth)
        sampling = self._sampling_factory(cfg) if self._sampling_factory else None
        elicitation = self._elicitation_factory(cfg) if self._elicitation_factory else None
        transport = self._transport_factory(cfg) if self._transport_factory else None

        async def on_notification(message: Any) -> None:
            root = getattr(message, "root", message)
            if isinstance(root, _LIST_CHANGED):
                h.stale = True
            if isinstance(root, types.ResourceListChangedNotification):
                h.skills_version += 1

        return connect(
            cfg,
            auth=auth,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            on_notification=on_notification,
            client_info=self._client_info,
            probe=probe,
            transport=transport,
        )

    def _up(self, h: ServerHandle, conn: Connection, listing: Any) -> None:
        client = conn.client
        info = client.server_info
        h.conn = conn
        h.listing = listing
        h.version += 1
        h.stale = False
        h.state = "connected"
        h.last_error = "; ".join(listing.problems) or None
        h.auth_required = None
        h.protocol_version = client.protocol_version
        h.server_info = info.model_dump(mode="json", exclude_none=True) if info else None
        h.instructions = client.instructions
        h.notify()

    def _down(self, h: ServerHandle, *, forced: bool, lived: float | None) -> None:
        now = anyio.current_time()
        h.conn = None
        if h.stopped:
            h.state = "stopped"
        else:
            h.state = "failed"
            h.lost = lived is not None
            base, cap = self._backoff
            if lived is not None and now - lived >= cap:
                h.failures = 0  # it ran well for a while: start the backoff over
            if not forced:
                h.failures += 1
                h.retry_at = now + min(cap, base * 2 ** (h.failures - 1))
            if h.hold:
                h.retry_at = math.inf
        h.notify()


async def _listen(h: ServerHandle, conn: Connection) -> None:
    """On a 2026-07-28 session change news comes only on a ``subscriptions/listen`` stream
    (there is no standing channel): mark the listing stale on each event, as a handshake-era
    ``list_changed`` notification does."""
    if conn.client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return
    try:
        async with conn.client.listen(
            tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
        ) as sub:
            async for event in sub:
                h.stale = True
                if isinstance(event, ResourcesListChanged):
                    h.skills_version += 1
    except Exception:  # best effort: without the stream the listing still refreshes on its TTL
        return


def _alive(h: ServerHandle) -> bool:
    return not h.stopped


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError) and not str(exc):
        return "listing timed out"
    return describe(exc)
