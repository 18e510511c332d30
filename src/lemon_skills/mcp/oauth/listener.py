"""The loopback listener that receives the OAuth authorization-code redirect.

It binds the configured ``redirect_uri`` (127.0.0.1 / localhost, port 0 meaning any free port)
for the duration of one flow, answers only its path, and accepts exactly one callback carrying
the expected ``state``: other paths get 404 and a wrong or missing state 400, and the listener
keeps waiting, so a stray local request cannot end or hijack a login. The query string (which
holds the code) is never logged.
"""

from __future__ import annotations

import contextlib
import html
import logging
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import anyio
import anyio.abc
from anyio.streams.stapled import MultiListener

from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.oauth.options import loopback_problem

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 16 * 1024
_READ_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CallbackResult:
    """What the authorization server sent back to the redirect URI."""

    code: str
    state: str
    iss: str | None = None


class CallbackListener:
    """``async with CallbackListener(uri) as listener:`` then ``await listener.result()``."""

    def __init__(self, redirect_uri: str, *, server: str | None = None) -> None:
        problem = loopback_problem(redirect_uri)
        if problem:
            raise McpAuthError(f"redirect_uri {problem}", server=server)
        self._parts = urlsplit(redirect_uri)
        self._server = server
        self._expected_state: str | None = None
        self._done = anyio.Event()
        self._result: CallbackResult | McpAuthError | None = None
        self._stack = contextlib.AsyncExitStack()
        self.redirect_uri = redirect_uri

    def expect_state(self, state: str) -> None:
        """Accept only a callback carrying this ``state``."""
        self._expected_state = state

    async def result(self) -> CallbackResult:
        """Wait for the matching callback; raises McpAuthError when the AS reported an error."""
        await self._done.wait()
        if isinstance(self._result, McpAuthError):
            raise self._result
        assert self._result is not None
        return self._result

    async def __aenter__(self) -> CallbackListener:
        host = self._parts.hostname or "127.0.0.1"
        port = self._parts.port or 0
        listener = await self._bind(host, port)
        self._stack.push_async_callback(listener.aclose)
        bound_port = _port_of(listener)
        if port == 0:
            netloc = f"{host}:{bound_port}" if ":" not in host else f"[{host}]:{bound_port}"
            self.redirect_uri = urlunsplit(self._parts._replace(netloc=netloc))
        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)
        tg.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    async def _bind(self, host: str, port: int) -> anyio.abc.Listener[anyio.abc.SocketStream]:
        # "localhost" with a fixed port binds every loopback address it resolves to (IPv4 and
        # IPv6) because the browser may pick either; any free port needs one concrete address.
        bind_host = "127.0.0.1" if host == "localhost" and port == 0 else host
        try:
            return await anyio.create_tcp_listener(local_host=bind_host, local_port=port)
        except OSError as exc:
            raise McpAuthError(
                f"cannot listen on {host}:{port} for the OAuth callback ({exc.strerror})",
                server=self._server,
                hint="free the port or change oauth.redirect_uri (use :0 for any free port)",
            ) from exc

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(_READ_TIMEOUT_S):
                    head = await _read_head(stream)
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, ValueError):
                return
            status, body = self._respond(head)
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(_http_response(status, body))

    def _respond(self, head: bytes) -> tuple[int, str]:
        try:
            method, target, _ = head.split(b"\r\n", 1)[0].decode("ascii").split(" ", 2)
        except (UnicodeDecodeError, ValueError):
            return 400, "Bad request."
        parts = urlsplit(target)
        if method != "GET" or parts.path != (self._parts.path or "/"):
            return 404, "Unexpected callback path."
        if self._done.is_set():
            return 400, "This sign-in has already completed."
        query = dict(parse_qsl(parts.query))
        if self._expected_state is None or query.get("state") != self._expected_state:
            logger.warning("ignored an OAuth callback without the expected state")
            return 400, "Unexpected or missing state."
        if "error" in query:
            detail = query.get("error_description", "")
            self._finish(
                McpAuthError(
                    f"authorization failed: {query['error']}" + (f" ({detail})" if detail else ""),
                    server=self._server,
                )
            )
            return 400, "Sign-in failed. You can close this window."
        if not query.get("code"):
            return 400, "The callback carried no authorization code."
        self._finish(CallbackResult(code=query["code"], state=query["state"], iss=query.get("iss")))
        return 200, "Sign-in complete. You can close this window."

    def _finish(self, result: CallbackResult | McpAuthError) -> None:
        self._result = result
        self._done.set()


async def _read_head(stream: anyio.abc.SocketStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive(4096)
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError("request too large")
    return data


def _http_response(status: int, message: str) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    page = (
        "<!doctype html><html><head><meta charset=utf-8><title>lemon-skills</title></head>"
        f"<body><p>{html.escape(message)}</p></body></html>"
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(page)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + page


def _port_of(listener: anyio.abc.Listener[anyio.abc.SocketStream]) -> int:
    first = listener.listeners[0] if isinstance(listener, MultiListener) else listener
    port = first.extra(anyio.abc.SocketAttribute.local_port)
    return int(port)
