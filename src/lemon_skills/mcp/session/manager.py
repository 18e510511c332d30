"""``McpManager``: requests on the servers' shared sessions, and what their failures mean.

A request (tool call, listing, read) runs in the caller's task on the session the lifecycle
(``lifecycle.Lifecycle``) holds, bounded by the entry's ``timeout_ms``; a server found dead is
reconnected first, and a connection lost mid-request is told apart from an answer that is an
error, so a tool call is never sent twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp import types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.config.entries import ServerConfig
from lemon_skills.mcp.oauth.failure import auth_error
from lemon_skills.mcp.session.connect import Connection, describe
from lemon_skills.mcp.session.deadline import Deadline
from lemon_skills.mcp.session.handle import ServerHandle
from lemon_skills.mcp.session.lifecycle import Lifecycle

T = TypeVar("T")

#: How long a connection whose stderr ended may take to show that its transport ended too.
_EXIT_NOTICE_S = 0.5
#: How long a server whose stderr closed has to answer a ping before it counts as gone.
_PING_S = 2.0


class McpManager(Lifecycle):
    """Owns every server session; use as ``async with McpManager() as mgr``.

    ``auto_retry`` lets each server task reconnect on its own after the backoff; hosts that
    run the loop only during calls (the synchronous facade) turn it off and reconnect from
    ``connect_all`` / ``request`` instead. ``auth_factory``, ``sampling_factory`` and
    ``elicitation_factory`` give the per-server ``httpx2.Auth``, sampling and elicitation
    callbacks (``None``: no auth; the capability is not advertised); ``transport_factory``
    may serve an entry in-process instead (``None``: its own transport). A server whose
    interactive sign-in failed is not retried on its own (that would ask the operator again):
    only a forced attempt (``refresh``) tries again.
    """

    async def request(
        self,
        handle: ServerHandle,
        op: Callable[[Any], Awaitable[T]],
        *,
        what: str,
        deadline: Deadline | None = None,
        resend: bool = True,
    ) -> T:
        """Run ``op(client)`` on the server's session, under ``deadline`` (default: the
        entry's ``timeout_ms``; progress pushes it back up to ``max_total_timeout_ms``).

        A server found dead before sending (its process exited, its session ended) is
        reconnected first, without waiting for a backoff. When the connection breaks while
        the request is in flight, the request is sent again once on a new session only when
        ``resend`` (listings, reads) or when the server is known to have refused it unread
        (an HTTP 404 for a stale session); a tool call may already have run, so it is not.

        Raises:
            McpToolError: the server is down (after one reconnect attempt), the request
                timed out, the connection broke, the server answered with a protocol error or
                an invalid result.
        """
        deadline = deadline or self.deadline(handle.config)
        conn = handle.conn
        if conn is None or conn.gone():
            conn = await self._ready(handle)
        try:
            return await self._send(handle, conn, op, what, deadline)
        except _Lost as lost:
            if not (resend or lost.unread):
                tail = conn.stderr_tail()
                raise McpToolError(
                    f"{what}: the connection was lost while the request was in flight "
                    f"({lost.reason}); it may have run on the server, so it was not sent "
                    "again" + (f"; stderr: {tail}" if tail else ""),
                    server=handle.name,
                    hint="check whether it took effect before calling it again",
                ) from lost.__cause__
        conn = await self._ready(handle)
        try:
            return await self._send(handle, conn, op, what, deadline)
        except _Lost as lost:
            raise McpToolError(
                f"{what} failed: connection lost ({lost.reason})", server=handle.name
            ) from lost.__cause__

    @staticmethod
    def deadline(cfg: ServerConfig, timeout_s: float | None = None, **kw: Any) -> Deadline:
        """A request deadline from the entry's timeouts (``timeout_s`` overrides the first)."""
        timeout = cfg.timeout_ms / 1000 if timeout_s is None else timeout_s
        return Deadline(timeout, cfg.max_total_timeout_ms / 1000, **kw)

    async def _ready(self, handle: ServerHandle) -> Connection:
        """The live connection, reconnecting one that is gone or was lost (``request`` asks
        only when the one it holds is missing or gone)."""
        conn = handle.conn
        if conn is not None and not conn.gone():
            return conn
        if conn is not None:
            # Died while idle: let the transport notice, then start over now.
            with anyio.move_on_after(_EXIT_NOTICE_S):
                await conn.closed.wait()
            if handle.conn is conn and not conn.closed.is_set() and await _answers(conn):
                return conn  # its stderr closed, but it still answers
            self.reconnect(handle, reason=_exited(conn))
        await self.connect_all([handle], force=handle.lost)
        conn = handle.conn
        if conn is None or conn.closed.is_set():
            reason = handle.last_error or "not connected yet"
            raise McpToolError(
                f"not connected ({reason})",
                server=handle.name,
                hint="`lemon mcp status` shows why; the next call tries to connect again",
            )
        return conn

    async def _send(
        self,
        handle: ServerHandle,
        conn: Connection,
        op: Callable[[Any], Awaitable[T]],
        what: str,
        deadline: Deadline,
    ) -> T:
        failed_before = getattr(handle.auth, "last_error", None)
        try:
            with self._timekeeper.watch(deadline):
                return await op(conn.client)
            raise TimeoutError  # only reached when the deadline's scope ended the block
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise McpToolError(f"{what} {deadline.reason()}", server=handle.name) from None
            if not _broken(exc):
                raise McpToolError(f"{what} failed: {exc.message}", server=handle.name) from exc
            # A failed re-authorization ends the session; its own reason is the precise one.
            fresh = getattr(handle.auth, "last_error", None) is not failed_before
            precise = auth_error(handle.auth) if fresh else None
            self.reconnect(
                handle, start=False, reason=precise or f"connection lost ({exc.message})"
            )
            if precise is not None:
                raise McpToolError(f"{what} failed: {precise}", server=handle.name) from exc
            stale = "session terminated" in exc.message.lower() and conn.probe.http_status == 404
            raise _Lost(exc.message, unread=stale) from exc
        except TimeoutError:
            raise McpToolError(f"{what} {deadline.reason()}", server=handle.name) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            self.reconnect(handle, start=False, reason="connection lost")
            raise _Lost("connection closed") from exc
        except (ValidationError, RuntimeError) as exc:
            reason = f"the server's answer is invalid: {describe(exc)}"
            raise McpToolError(f"{what} failed: {reason}", server=handle.name) from exc
        finally:
            self._timekeeper.release(deadline)


class _Lost(Exception):
    """Internal: the connection broke under a request; ``unread``: the server refused it
    without reading it (so sending it again cannot duplicate work)."""

    def __init__(self, reason: str, *, unread: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unread = unread


def _exited(conn: Connection) -> str:
    tail = conn.stderr_tail()
    return "the server exited" + (f"; stderr: {tail}" if tail else "")


async def _answers(conn: Connection) -> bool:
    """Whether a server whose stderr closed still answers a ping (safe to send: it changes
    nothing on the server), so a slow transport teardown is not taken for a live server."""
    with anyio.move_on_after(_PING_S):
        try:
            await conn.client.send_ping()
        except Exception:  # any failure of the ping means the session is unusable
            return False
        return True
    return False


def _broken(exc: MCPError) -> bool:
    return exc.code == types.CONNECTION_CLOSED or "session terminated" in exc.message.lower()
