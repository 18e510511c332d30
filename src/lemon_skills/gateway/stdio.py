"""The gateway's side of stdio: JSON-RPC lines on the process's stdin and stdout, read and
written on the event loop itself.

Why not the SDK's ``stdio_server``: it reads each line and writes (then flushes) each
message through a worker thread, three thread hops per call, which on a busy machine costs
more than the rest of the gateway's work on a call. Here the descriptors are non-blocking and
waited on by the loop; lines are split and parsed by the client transport's own
``LineSplitter`` and ``parse_line``. As the SDK does, fd 0 and 1 point at the null device and
at stderr while serving, so nothing a handler or child prints can corrupt the wire.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from lemon_skills.gateway.wire import encode
from lemon_skills.mcp.transport.stdio import Item, LineSplitter, parse_line

_CHUNK = 1 << 16


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` over stdin/stdout, for ``Server.run``."""
    wire_in, wire_out = _claim(0, os.O_RDONLY), _claim(1, os.O_WRONLY)
    flags = [_nonblocking(fd) for fd in (wire_in, wire_out)]
    reader_send, read_stream = anyio.create_memory_object_stream[Item](0)
    write_stream, writer_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        splitter = LineSplitter()
        async with reader_send:
            while True:
                await anyio.wait_readable(wire_in)
                try:
                    chunk = os.read(wire_in, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                for line in splitter.feed(chunk):
                    item = parse_line(line)
                    if isinstance(item, Exception):
                        # The sender is told at once, with the id JSON-RPC gives what
                        # cannot be read; the server never sees the line.
                        await write_stream.send(SessionMessage(_unreadable(item)))
                        continue
                    await reader_send.send(item)

    async def write() -> None:
        async with writer_receive:
            async for message in writer_receive:
                await _write_all(wire_out, encode(message.message) + b"\n")

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(write)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
    finally:
        for fd, old in zip((wire_in, wire_out), flags, strict=True):
            with suppress(OSError):
                fcntl.fcntl(fd, fcntl.F_SETFL, old)
        _restore(0, wire_in)
        _restore(1, wire_out)


def _unreadable(exc: Exception) -> types.JSONRPCError:
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    json_ok = bool(errors) and errors[0].get("type") != "json_invalid"
    code = types.INVALID_REQUEST if json_ok else types.PARSE_ERROR
    what = "not a JSON-RPC message" if code == types.INVALID_REQUEST else "not valid JSON"
    error = types.ErrorData(code=code, message=f"the line is {what}")
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)


async def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)


def _claim(fd: int, mode: int) -> int:
    """A private duplicate of ``fd``; ``fd`` itself then points at the null device (stdin)
    or stderr (stdout)."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    divert = os.open(os.devnull, os.O_RDONLY) if mode == os.O_RDONLY else os.dup(2)
    os.dup2(divert, fd)
    os.close(divert)
    return private


def _restore(fd: int, private: int) -> None:
    with suppress(OSError):
        os.dup2(private, fd)
        os.close(private)


def _nonblocking(fd: int) -> int:
    old = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, old | os.O_NONBLOCK)
    return old
