"""Open one MCP session over stdio, Streamable HTTP or legacy SSE, through the official SDK.

``connect(config)`` is a thin async context manager over a transport (the SDK's for HTTP and
SSE, ``transport.stdio`` for stdio) and ``mcp.Client``; it adds what a multi-server host needs:
``${VAR}`` expansion in commands, env, URLs and headers, a pre-flight check that the command
exists, the server's stderr kept as a bounded tail for error messages, a ``closed`` event that
fires when the transport ends (a crashed stdio server, a dropped SSE stream), and readable
error texts. Seams for the auth and sampling layers: ``auth`` (an ``httpx2.Auth`` for
HTTP/SSE), ``http_client`` (Streamable HTTP), ``sampling_callback`` and
``elicitation_callback``; ``transport`` replaces the entry's own transport with another, e.g.
the SDK's ``InMemoryTransport(server)`` for a server running in this process (nothing is
spawned or dialled then).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import Client
from mcp.client.session import ElicitationFnT, MessageHandlerFnT, SamplingFnT
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation, JSONRPCResponse

from lemon_skills.errors import McpConnectError, McpError
from lemon_skills.mcp.config.entries import HttpServer, ServerConfig, SseServer, StdioServer
from lemon_skills.mcp.config.lint import command_hint, executable_found
from lemon_skills.mcp.session import logs
from lemon_skills.mcp.session.errlog import StderrLog, StderrPipe, close_quietly, log_path
from lemon_skills.mcp.transport.stdio import stdio_transport
from lemon_skills.version import __version__

#: How long an event stream (legacy SSE, Streamable HTTP GET) may stay silent. Long on purpose:
#: the synchronous facade pauses its loop between calls, and a short read timeout would then
#: drop idle streams; every request still has its own ``timeout_ms``.
SSE_READ_TIMEOUT_S = 24 * 3600.0

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

NotificationFn = Callable[[Any], Awaitable[None]]
#: An open-able transport: entering it gives the (read, write) streams of one session.
TransportCM = AbstractAsyncContextManager[tuple[Any, Any]]


@dataclass(eq=False)
class Probe:
    """What one connection attempt has observed so far; filled in while it runs, so a caller
    can explain a failure before the attempt has finished tearing down."""

    closed: anyio.Event = field(default_factory=anyio.Event)
    stderr: StderrLog = field(default_factory=StderrLog)
    pipe: StderrPipe | None = None
    protocol_errors: int = 0
    http_status: int | None = None

    async def on_response(self, response: httpx2.Response) -> None:
        """httpx2 response hook: remember the last error status (the SDK does not say it)."""
        if response.status_code >= 400:
            self.http_status = response.status_code

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines the server wrote to stderr (empty for HTTP/SSE)."""
        return self.stderr.summary(lines)


@dataclass(eq=False)
class Connection:
    """A live session: the SDK ``Client`` plus what the manager watches."""

    client: Client
    config: ServerConfig
    probe: Probe

    @property
    def closed(self) -> anyio.Event:
        """Set once the transport's read side has ended (the server is gone)."""
        return self.probe.closed

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines the server wrote to stderr."""
        return self.probe.stderr_tail(lines)

    def gone(self) -> bool:
        """Whether the transport is known to have ended, or a stdio server's stderr pipe has
        (checked without running the event loop, so a server that died while the loop was
        paused is noticed before anything is sent to it)."""
        pipe = self.probe.pipe
        return self.closed.is_set() or (pipe is not None and pipe.gone())


def expand(text: str, env: Mapping[str, str]) -> str:
    """Replace ``${VAR}`` and ``${VAR:-default}``.

    Raises:
        McpConnectError: a referenced variable is unset and has no default.
    """

    def sub(m: re.Match[str]) -> str:
        value = env.get(m.group(1))
        if value is None:
            if m.group(2) is None:
                raise McpConnectError(
                    f"environment variable {m.group(1)} is not set",
                    hint=f"export {m.group(1)}=... or write ${{{m.group(1)}:-default}}",
                )
            return m.group(2)
        return value

    return _VAR.sub(sub, text)


@asynccontextmanager
async def connect(
    config: ServerConfig,
    *,
    auth: httpx2.Auth | None = None,
    http_client: httpx2.AsyncClient | None = None,
    sampling_callback: SamplingFnT | None = None,
    elicitation_callback: ElicitationFnT | None = None,
    on_notification: NotificationFn | None = None,
    client_info: Implementation | None = None,
    ready_timeout: float | None = None,
    probe: Probe | None = None,
    transport: TransportCM | None = None,
) -> AsyncIterator[Connection]:
    """Open a session; the handshake (``server/discover`` or ``initialize``) is done on entry.

    ``on_notification`` receives server notifications (list changes, log messages). The
    handshake must finish within ``ready_timeout`` seconds (default: the entry's
    ``ready_timeout_ms``, plus the sign-in time of an interactive OAuth login); after that the
    session lives until the block exits. ``probe`` (optional) is filled with what the attempt
    observes (stderr, bad stdout lines, closure). ``transport`` (optional) is used instead of
    the one the entry names; the entry's command, URL and headers are then not used.

    Raises:
        McpConnectError: the command is missing or the server could not be reached or
            initialised; the message says why.
    """
    logs.install()
    env = dict(os.environ)
    seen = probe if probe is not None else Probe()
    message_handler = _message_handler(seen, on_notification)
    ready_s = config.connect_budget_s() if ready_timeout is None else ready_timeout
    # One scope spans the whole session so the startup deadline can be lifted once it is up
    # (a scope around the entry alone would end before the transport's task groups do).
    with anyio.CancelScope(deadline=anyio.current_time() + ready_s) as scope:
        async with AsyncExitStack() as stack:
            errlog = None
            if transport is None and isinstance(config, StdioServer):
                seen.stderr.path = log_path(config)
                seen.pipe = StderrPipe(seen.stderr)
                errlog = seen.pipe.open(stack)
            if transport is None:
                transport = await _open_transport(
                    config, env, stack, errlog, auth, http_client, seen
                )
            client = Client(
                _Watched(transport, seen.closed),
                mode=config.protocol,
                sampling_callback=sampling_callback,
                elicitation_callback=elicitation_callback,
                message_handler=message_handler,
                client_info=client_info or Implementation(name="lemon-skills", version=__version__),
                cache=None,
            )
            try:
                await stack.enter_async_context(client)
            except Exception as exc:  # any startup failure becomes one readable error
                raise McpConnectError(
                    startup_failure(exc, seen, config), server=config.name
                ) from exc
            finally:
                # The child has its own copy of the stderr pipe; ours would only keep it open.
                if errlog is not None:
                    close_quietly(errlog)
            scope.deadline = math.inf
            yield Connection(client=client, config=config, probe=seen)
            return
    # Only reached when the startup deadline cancelled the entry.
    raise McpConnectError(
        startup_failure(startup_timeout(ready_s), seen, config), server=config.name
    )


def _message_handler(probe: Probe, forward: NotificationFn | None) -> MessageHandlerFnT:
    """Count what the transport could not parse; pass notifications on."""

    async def handler(message: Any) -> None:
        if isinstance(message, Exception):
            probe.protocol_errors += 1
        elif forward is not None:
            await forward(message)

    return handler


def startup_timeout(seconds: float) -> TimeoutError:
    """The error of a server that did not finish its handshake in time."""
    return TimeoutError(f"no answer within {seconds:g} s (startup timed out)")


async def _open_transport(
    config: ServerConfig,
    env: dict[str, str],
    stack: AsyncExitStack,
    errlog: Any,
    auth: httpx2.Auth | None,
    http_client: httpx2.AsyncClient | None,
    probe: Probe,
) -> Any:
    if isinstance(config, StdioServer):
        return stdio_transport(stdio_parameters(config, env), errlog)
    url = expand(config.url, env)
    headers = {k: expand(v, env) for k, v in config.headers.items()}
    hooks = {"response": [probe.on_response]}
    if isinstance(config, SseServer):

        def factory(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers=headers, timeout=timeout, auth=auth, event_hooks=hooks
            )

        return sse_client(
            url,
            headers=headers or None,
            timeout=config.timeout_ms / 1000,
            sse_read_timeout=SSE_READ_TIMEOUT_S,
            auth=auth,
            httpx_client_factory=factory,
        )
    assert isinstance(config, HttpServer)
    if http_client is None:
        timeout = httpx2.Timeout(config.timeout_ms / 1000, read=SSE_READ_TIMEOUT_S)
        http_client = httpx2.AsyncClient(
            headers=headers, auth=auth, timeout=timeout, event_hooks=hooks
        )
        await stack.enter_async_context(http_client)
    return streamable_http_client(url, http_client=http_client)


def stdio_parameters(config: StdioServer, env: Mapping[str, str]) -> StdioServerParameters:
    """The SDK parameters, with variables expanded and the executable checked.

    The child gets the SDK's allow-listed environment plus the entry's ``env``, never our
    whole environment.

    Raises:
        McpConnectError: the executable cannot be found.
    """
    command = expand(config.command, env)
    args = [expand(a, env) for a in config.args]
    child_env = {k: expand(v, env) for k, v in config.env.items()}
    cwd = config.effective_cwd()
    path = (get_default_environment() | child_env).get("PATH")
    if not executable_found(command, cwd, path):
        split = command_hint(command)
        raise McpConnectError(
            f"executable not found: {command}" + (f"; {split}" if split else ""),
            server=config.name,
            hint=None
            if split
            else 'install it or fix "command" in the MCP config (it must be on PATH)',
        )
    if cwd is not None and not cwd.is_dir():
        raise McpConnectError(f"working directory does not exist: {cwd}", server=config.name)
    return StdioServerParameters(command=command, args=args, env=child_env or None, cwd=cwd)


def complete_by_default(item: Any) -> Any:
    """Give a result without ``resultType`` the value the spec implies for it, ``complete``.

    2026-07-28 (SEP-2322): "absent resultType is equivalent to complete". mcp 2.3's client
    validates each result against the revision's wire schema, where the key is required, so
    such a result (the conformance suite serves one) would fail as invalid instead of being
    read as the complete answer it is. Filling it in here, where the message enters the
    session, keeps the SDK unpatched; results of earlier revisions carry no ``resultType`` and
    their models ignore the key.
    """
    message = getattr(item, "message", None)
    if isinstance(message, JSONRPCResponse) and "resultType" not in message.result:
        message.result["resultType"] = "complete"
    return item


class _Watched:
    """Wraps a transport so the end of its read stream sets ``closed`` (no extra hop)."""

    def __init__(self, transport: Any, closed: anyio.Event) -> None:
        self._transport = transport
        self._closed = closed

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._transport.__aenter__()
        return _WatchedReceive(read, self._closed), write

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._transport.__aexit__(*exc)
        return result


class _WatchedReceive:
    """A receive stream proxy: same items, same ``last_context``; EOF sets an event."""

    def __init__(self, inner: MemoryObjectReceiveStream[Any], closed: anyio.Event) -> None:
        self._inner = inner
        self._closed = closed

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._closed.set()
            raise
        return complete_by_default(item)

    def __aiter__(self) -> _WatchedReceive:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        self._inner.close()

    async def __aenter__(self) -> _WatchedReceive:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def describe(exc: BaseException) -> str:
    """One line for a failure, unwrapping task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    if isinstance(exc, McpError):
        text = str(exc)
        prefix = f"MCP server {exc.server!r}: "
        return text[len(prefix) :] if exc.server and text.startswith(prefix) else text
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect{_to(exc)}: {exc or 'connection refused'}"
    if isinstance(exc, TimeoutError) and str(exc):
        return str(exc)
    if isinstance(exc, httpx2.TimeoutException):
        return "HTTP request timed out"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {exc.filename}" if exc.filename else "")
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _to(exc: httpx2.RequestError) -> str:
    """`` to <url>`` of a failed request, without credentials or query (they may be keys)."""
    try:
        url = exc.request.url
    except RuntimeError:  # an error raised outside a request carries none
        return ""
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = f":{url.port}" if url.port else ""
    return f" to {url.scheme}://{host}{port}{url.path}"


def startup_failure(exc: BaseException, probe: Probe, config: ServerConfig) -> str:
    """Why a connection did not come up, with the server's own last words when it has any."""
    reason = describe(exc)
    if probe.closed.is_set() and isinstance(config, StdioServer):
        reason = f"server exited during startup ({reason})"
    if probe.http_status is not None and str(probe.http_status) not in reason:
        reason += f" (HTTP {probe.http_status})"
    if probe.protocol_errors:
        reason += f"; it wrote {probe.protocol_errors} line(s) that are not JSON-RPC to stdout"
    tail = probe.stderr_tail()
    return f"{reason}; stderr: {tail}" if tail else reason
