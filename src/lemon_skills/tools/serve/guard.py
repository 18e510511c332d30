"""What an HTTP endpoint of lemon lets in: the bind address, bearer tokens, Host and Origin
checks and a body cap, shared by ``lemon mcp serve --http`` and the gateway.

The policy is pure (``Exposure``, ``parse_bind``, ``check_exposure``, ``transport_security``);
``guard`` is a small ASGI middleware enforcing it in front of any app and ``run_http`` serves
an app with uvicorn on sockets bound here, so a start-up failure is one sentence, not a
traceback. A page in a browser reaches a server only through its Host (DNS rebinding) and
Origin headers, and never holds the bearer token, so the checks hold on every bind.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import signal
import socket
import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import uvicorn
from mcp.server.transport_security import (
    RequestBodyLimitMiddleware,
    TransportSecuritySettings,
)
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lemon_skills.errors import ConfigError, InvalidValue, ServeError

#: The names a loopback-only server is reached by; anything else may be another machine.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Binds that listen on every interface.
WILDCARD = ("0.0.0.0", "::", "")
#: Where the matching ``Grant`` is put in an ASGI scope's ``state``.
GRANT_KEY = "lemon.grant"
#: Seconds in-flight requests get to finish after SIGTERM/SIGINT (open streams are cut then).
GRACE_S = 5


@dataclass(frozen=True)
class Grant:
    """One line of a token file: a bearer token, optionally bound to an agent profile."""

    token: str
    agent: str | None = None

    def __repr__(self) -> str:  # a token never reaches a log through a repr
        return f"Grant(token='***', agent={self.agent!r})"


def read_token_file(path: Path) -> tuple[Grant, ...]:
    """The grants of ``path``: ``TOKEN`` or ``TOKEN AGENT`` per line, ``#`` comments and blank
    lines ignored."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read the token file: {reason}", path=path) from None
    grants = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) > 2:
            raise ConfigError(
                f"line {n}: expected TOKEN or TOKEN AGENT, got {len(parts)} words", path=path
            )
        grants.append(Grant(parts[0], parts[1] if len(parts) == 2 else None))
    if not grants:
        raise ConfigError(
            "the token file holds no token", path=path, hint="put one bearer token per line"
        )
    return tuple(grants)


@dataclass(frozen=True)
class Exposure:
    """Where a server listens and who may use it."""

    host: str
    port: int
    grants: tuple[Grant, ...] = ()
    #: Origins allowed besides the bind's own (a web client served elsewhere).
    allowed_origins: tuple[str, ...] = ()
    max_body_bytes: int = 4 * 1024 * 1024

    @property
    def url(self) -> str:
        return f"http://{_authority(self.host, self.port)}/mcp"

    @property
    def loopback(self) -> bool:
        """Only this machine can connect (the literal loopback names, nothing resolved)."""
        return self.host in LOOPBACK


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as ``(host, port)``; port 0 picks a free one."""
    host, sep, port = text.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or any(c.isspace() for c in host):
        raise InvalidValue(
            f"--http {text!r}: expected HOST:PORT",
            hint="e.g. --http 127.0.0.1:8765 (or [::1]:8765)",
        )
    if int(port) > 65535:
        raise InvalidValue(f"--http {text!r}: port {port} is above 65535")
    return host, int(port)


def exposure_for(
    bind: str, token_file: Path | None = None, origins: Sequence[str] = ()
) -> Exposure:
    """The ``Exposure`` of the CLI's ``--http HOST:PORT``, ``--token-file`` and
    ``--allow-origin`` (not yet checked: ``check_exposure``).

    Raises:
        InvalidValue: a bad ``HOST:PORT``.
        LemonSkillsError: an unreadable, empty or malformed token file.
    """
    host, port = parse_bind(bind)
    grants = read_token_file(token_file) if token_file is not None else ()
    return Exposure(host, port, grants=grants, allowed_origins=tuple(origins))


def check_exposure(exposure: Exposure) -> None:
    """Refuse a bind other machines could reach when no token guards it, and an allowed
    origin that is not ``scheme://host[:port]``."""
    for origin in exposure.allowed_origins:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
            raise InvalidValue(
                f"--allow-origin {origin!r}: expected an origin such as https://app.example"
            )
    if exposure.loopback or exposure.grants:
        return
    raise InvalidValue(
        f"refusing to serve on {exposure.host} without bearer tokens: it is not a loopback "
        "address, so other machines or a web page could use the server",
        hint="pass --token-file FILE (one token per line), or bind 127.0.0.1",
    )


def transport_security(exposure: Exposure) -> TransportSecuritySettings:
    """DNS-rebinding protection for ``exposure``: the Host names it is reached by, the
    Origins of pages served there, and ``allowed_origins``."""
    hosts = _host_names(exposure)
    ports = ["*"] if exposure.port == 0 else [str(exposure.port)]
    allowed_hosts = [f"{_bracket(h)}:{p}" for h in hosts for p in ports]
    if exposure.port == 80:
        allowed_hosts += [_bracket(h) for h in hosts]
    origins = [f"http://{h}" for h in allowed_hosts]
    origins += [o.rstrip("/") for o in exposure.allowed_origins]
    for origin in exposure.allowed_origins:
        netloc = urlsplit(origin).netloc
        if netloc and netloc not in allowed_hosts:
            allowed_hosts.append(netloc)  # a proxy serving that origin forwards its Host
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts,
        allowed_origins=origins,
    )


def guard(app: ASGIApp, exposure: Exposure) -> ASGIApp:
    """``app`` behind the checks of ``exposure``: 403 for a foreign Host or Origin, 401 without
    a valid token (when there are grants), 413 for a body above ``max_body_bytes``."""
    return _Guard(RequestBodyLimitMiddleware(app, exposure.max_body_bytes), exposure)


class _Guard:
    def __init__(self, app: ASGIApp, exposure: Exposure) -> None:
        self.app = app
        self.exposure = exposure
        self.security = transport_security(exposure)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not _matches(headers.get("host"), self.security.allowed_hosts):
            await _deny(403, "Invalid Host header", scope, receive, send)
            return
        origin = headers.get("origin")
        if origin and not _matches(origin, self.security.allowed_origins):
            await _deny(403, "Invalid Origin header", scope, receive, send)
            return
        grant = None
        if self.exposure.grants:
            grant = _grant(headers.get("authorization"), self.exposure.grants)
            if grant is None:
                await _deny(401, "A valid bearer token is required", scope, receive, send)
                return
        scope.setdefault("state", {})[GRANT_KEY] = grant
        await self.app(scope, receive, send)


def _grant(header: str | None, grants: tuple[Grant, ...]) -> Grant | None:
    scheme, _, token = (header or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    found = None
    for g in grants:  # every grant compared, in constant time each
        if hmac.compare_digest(g.token.encode(), token.encode()):
            found = found or g
    return found


def _matches(value: str | None, allowed: list[str]) -> bool:
    if not value:
        return False
    return any(
        value == a or (a.endswith(":*") and value.startswith(a[:-1]) and value[len(a) - 1 :])
        for a in allowed
    )


async def _deny(status: int, text: str, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": text})
        return
    headers = {"WWW-Authenticate": 'Bearer realm="lemon"'} if status == 401 else None
    await PlainTextResponse(text, status_code=status, headers=headers)(scope, receive, send)


def _host_names(exposure: Exposure) -> list[str]:
    if exposure.loopback:
        return list(LOOPBACK)
    if exposure.host not in WILDCARD:
        return [exposure.host]
    # Every interface: the names and addresses this machine is known by.
    names = [*LOOPBACK, socket.gethostname(), socket.getfqdn()]
    with contextlib.suppress(OSError):
        names += [str(a[4][0]) for a in socket.getaddrinfo(socket.gethostname(), None)]
    return list(dict.fromkeys(n for n in names if n))


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _authority(host: str, port: int) -> str:
    return f"{_bracket(host)}:{port}"


# -- serving --------------------------------------------------------------------------------


async def run_http(
    app: ASGIApp, exposure: Exposure, *, on_listening: Callable[[str], None]
) -> None:
    """Serve ``app`` (already guarded) on ``exposure`` until SIGTERM/SIGINT, then let in-flight
    requests finish and return. ``on_listening`` gets the URL once the socket listens."""
    sockets = _bind(exposure.host, exposure.port)
    port = sockets[0].getsockname()[1]
    listening = Exposure(exposure.host, port)
    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_graceful_shutdown=GRACE_S,
        lifespan="on",
        proxy_headers=False,
    )
    server = _Uvicorn(config)
    failed = False
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_announce, server, listening.url, on_listening)
            try:
                await server.serve(sockets=sockets)
            except anyio.get_cancelled_exc_class():
                # Cancelled by the caller: the same graceful stop as a signal's.
                with anyio.CancelScope(shield=True):
                    server.should_exit = True
                    if server.started:
                        await server.shutdown(sockets=sockets)
                raise
            except SystemExit:  # uvicorn's way of saying the app's start-up failed
                failed = True
            finally:
                tg.cancel_scope.cancel()
    finally:
        for s in sockets:
            s.close()
    if failed:  # raised out here: inside the task group it would be an exception group
        raise ServeError(f"the server on {listening.url} failed to start", hint="see above")


async def _announce(server: Any, url: str, on_listening: Callable[[str], None]) -> None:
    while not server.started:
        await anyio.sleep(0.01)
    on_listening(url)


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, returning on SIGTERM/SIGINT instead of re-raising the signal."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)


def _bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port``: every address the host resolves to (one for an
    ephemeral port), or a ``ServeError`` saying why not."""
    where = _authority(host, port)
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError):
        raise ServeError(
            f"cannot serve on {where}: the host {host!r} does not resolve",
            hint="use an address of this machine, e.g. 127.0.0.1",
        ) from None
    seen: list[socket.socket] = []
    first_error: OSError | None = None
    for family, kind, proto, _, addr in dict.fromkeys(
        (i[0], i[1], i[2], i[3], i[4]) for i in infos
    ):
        try:
            sock = socket.socket(family, kind, proto)
        except OSError as exc:
            first_error = first_error or exc
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(addr)
            sock.listen(2048)
            sock.set_inheritable(True)
        except OSError as exc:
            sock.close()
            first_error = first_error or exc
            continue
        seen.append(sock)
        if port == 0:
            break
    if seen:
        return seen
    raise ServeError(f"cannot serve on {where}: {_why(first_error, port)}") from None


def _why(exc: OSError | None, port: int) -> str:
    code = exc.errno if exc is not None else None
    if code == errno.EADDRINUSE:
        return f"port {port} is already in use (another server is listening there)"
    if code == errno.EACCES:
        return "permission denied" + (" (ports below 1024 need privileges)" if port < 1024 else "")
    if code == errno.EADDRNOTAVAIL:
        return "that address is not one of this machine's"
    return (exc.strerror or str(exc)) if exc is not None else "no address to listen on"
