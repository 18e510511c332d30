"""The stdio transport: the server as a child process, newline-delimited JSON-RPC on its pipes.

Why not the SDK's ``stdio_client``: its reader decodes stdout into text chunks and re-joins
the pending text with every chunk (``buffer + chunk``), so a 50 MB result costs quadratic
copying (over a minute) and several copies at once, and then parses the line with pydantic's
``validate_json``, which holds the line, its own parse buffers and the result together (about
five times the line). Here stdout is read as bytes into one growing buffer, only the new chunk
is searched for the line end, and a long line is decoded, its bytes dropped, parsed with
``json.loads`` and its text dropped before pydantic validates the parsed value (which keeps
the strings it is given, without copying them). Ordinary lines take ``validate_json`` as the
SDK does. The rest is the SDK's own: the same ``SessionMessage`` streams, the spawn (own
process group, the SDK's allow-listed environment plus the entry's), the writer, and the
shutdown sequence (close stdin, wait, terminate the process tree), so only the read path
differs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import mcp_types as types
from mcp.client.stdio import (
    _WRITER_FLUSH_TIMEOUT,
    StdioServerParameters,
    _aclose_all,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _stop_server_process,
    get_default_environment,
)
from mcp.shared.message import SessionMessage

#: A line at least this long is parsed the lean way (see the module doc); shorter ones take
#: pydantic's single pass, which is faster for them.
LONG_LINE_BYTES = 1 << 20

Item = SessionMessage | Exception
#: A stdout line: bytes, or text once a long line has been decoded (its bytes dropped).
Line = bytes | bytearray | str


def parse_line(line: Line) -> Item:
    """One stdout line as a message, or the error that says why it is not one (the session
    hands such values to the message handler, which counts them)."""
    try:
        if isinstance(line, str):
            return SessionMessage(_validated(json.loads(line)))
        if len(line) < LONG_LINE_BYTES:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        return SessionMessage(_validated(json.loads(line.decode("utf-8"))))
    except ValueError as exc:  # JSON, UTF-8 and validation errors alike
        return exc


def _validated(value: Any) -> types.JSONRPCMessage:
    message: types.JSONRPCMessage = types.jsonrpc_message_adapter.validate_python(
        value, by_name=False
    )
    return message


class LineSplitter:
    """Bytes in, complete lines out. A line that spans reads is collected in one buffer and,
    when long, handed out decoded, so its bytes are freed before it is parsed."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[Line]:
        """The lines ``chunk`` completes (without their ``\\n``), oldest first."""
        end = chunk.find(b"\n")
        if end < 0:
            self._pending += chunk
            return []
        lines: list[Line] = []
        start = 0
        if self._pending:
            self._pending += chunk[:end]
            lines.append(self.take())
            start = end + 1
            end = chunk.find(b"\n", start)
        while end >= 0:
            lines.append(chunk[start:end])
            start = end + 1
            end = chunk.find(b"\n", start)
        if start < len(chunk):
            self._pending += chunk[start:]
        return lines

    def take(self) -> Line:
        """The pending bytes as one line (at EOF: an unterminated last line, maybe empty);
        the splitter lets go of them."""
        line, self._pending = self._pending, bytearray()
        if len(line) < LONG_LINE_BYTES:
            return line
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            return line  # parse_line reports it


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn ``server`` and yield the session's (read, write) streams, as ``stdio_client``.

    Raises:
        OSError: the process cannot be spawned.
    """
    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # No awaits until the task group is entered, or a cancellation would leak the process.
    reader_send, read_stream = anyio.create_memory_object_stream[Item](0)
    write_stream, writer_receive = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        splitter = LineSplitter()
        try:
            async with reader_send:
                try:
                    async for chunk in process.stdout:
                        lines = splitter.feed(chunk)
                        for index in range(len(lines)):
                            item = parse_line(lines[index])
                            lines[index] = b""  # a long line is freed before delivery
                            await reader_send.send(item)
                            del item
                    last = splitter.take()
                    if last:  # the server ended without a final newline
                        item = parse_line(last)
                        del last
                        await reader_send.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the session is gone; only the drain below remains
                finally:
                    await _drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # teardown closed the pipe or the stream under the read: the session sees EOF

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with writer_receive:
                async for message in writer_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may still run: end the read side so no request waits forever.
            await reader_send.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # unblocks the reader into its drain, so the flush can finish
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, reader_send, writer_receive)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            # Shutdown must finish under the caller's cancellation too, or the server would
            # leak; every wait in it is bounded.
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
