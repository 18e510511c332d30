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

While every request awaiting an answer is a read of a ``skill://`` file, a line longer than
such an answer can be is dropped as it arrives and the reads fail (``Inflight``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
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
from pydantic import ValidationError
from pydantic_core import from_json

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
            try:
                value = from_json(line)
            except ValueError:
                # The union's own error says why (with the type JSON-RPC codes are chosen by).
                return SessionMessage(
                    types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                )
            return SessionMessage(_validated(value))
        return SessionMessage(_validated(json.loads(line.decode("utf-8"))))
    except ValueError as exc:  # JSON, UTF-8 and validation errors alike
        return exc


def _validated(value: Any) -> types.JSONRPCMessage:
    kind = _kind(value)
    if kind is not None:
        # The one member of the union the keys allow (the union would pick it too), validated
        # alone: half the cost of trying every member. Anything else goes to the union.
        with suppress(ValidationError):
            return kind.model_validate(value, by_name=False)
    message: types.JSONRPCMessage = types.jsonrpc_message_adapter.validate_python(
        value, by_name=False
    )
    return message


def _kind(value: Any) -> type[types.JSONRPCMessage] | None:
    if not isinstance(value, dict):
        return None
    found = [k for k in ("method", "result", "error") if k in value]
    if len(found) != 1:
        return None
    if found[0] == "method":
        return types.JSONRPCRequest if "id" in value else types.JSONRPCNotification
    return types.JSONRPCResponse if found[0] == "result" else types.JSONRPCError


class LineSplitter:
    """Bytes in, complete lines out. A line that spans reads is collected in one buffer and,
    when long, handed out decoded, so its bytes are freed before it is parsed. A line longer
    than the ``bound`` a feed is given is dropped as it arrives (``overflowed`` says so)."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._dropping = False
        self.overflowed = False

    def feed(self, chunk: bytes, bound: int | None = None) -> list[Line]:
        """The lines ``chunk`` completes (without their ``\\n``), oldest first."""
        if self._dropping:
            cut = chunk.find(b"\n")
            if cut < 0:
                return []
            self._dropping = False
            chunk = chunk[cut + 1 :]
        end = chunk.find(b"\n")
        if end < 0:
            self._pending += chunk
            self._bound(bound)
            return []
        lines: list[Line] = []
        start = 0
        if self._pending:
            self._pending += chunk[:end]
            if not self._bound(bound):
                lines.append(self.take())
            self._dropping = False  # the dropped line ended here
            start = end + 1
            end = chunk.find(b"\n", start)
        while end >= 0:
            lines.append(chunk[start:end])
            start = end + 1
            end = chunk.find(b"\n", start)
        if start < len(chunk):
            self._pending += chunk[start:]
            self._bound(bound)
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

    def _bound(self, bound: int | None) -> bool:
        """Drop the pending line when it passed ``bound``; True when it did."""
        if bound is None or len(self._pending) <= bound:
            return False
        self._pending = bytearray()
        self._dropping = self.overflowed = True
        return True


#: The longest ``skill://`` file a read may return (the skills layer's ``MAX_FILE_BYTES``,
#: which this layer cannot import), and the longest line its answer may take: every byte
#: escaped as ``\\u00XX`` at worst, plus the envelope.
SKILL_FILE_BYTES = 4 * 1024 * 1024
SKILL_READ_LINE_BYTES = 6 * SKILL_FILE_BYTES + 65536


class Inflight:
    """The requests awaiting an answer, each with the longest line its answer may take. While
    every one of them is bounded (reads of ``skill://`` files), a longer line is dropped as it
    arrives and they are answered with an error: a server cannot make the client hold a
    150 MB "skill" in memory to find out it is too big."""

    def __init__(self) -> None:
        self._caps: dict[int | str, int | None] = {}

    def sent(self, message: Any) -> None:
        """Note a request going out, or one given up (``notifications/cancelled``)."""
        if isinstance(message, types.JSONRPCNotification):
            if message.method == "notifications/cancelled":
                self._caps.pop((message.params or {}).get("requestId"), None)  # type: ignore[arg-type]
            return
        if isinstance(message, types.JSONRPCRequest):
            uri = (message.params or {}).get("uri")
            skill_read = message.method == "resources/read" and str(uri).startswith("skill://")
            self._caps[message.id] = SKILL_READ_LINE_BYTES if skill_read else None

    def answered(self, item: Item) -> None:
        """Note an answer coming in."""
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._caps.pop(message.id, None)  # type: ignore[arg-type]

    def bound(self) -> int | None:
        """The longest line any awaited answer may take; None when one is unbounded."""
        caps = list(self._caps.values())
        if not caps or None in caps:
            return None
        return max(c for c in caps if c is not None)

    def refuse_all(self) -> list[SessionMessage]:
        """Errors answering every awaited request (the line that overflowed was one of them)."""
        reason = f"the server's answer is longer than {SKILL_READ_LINE_BYTES} bytes; dropped"
        out = [
            SessionMessage(
                types.JSONRPCError(
                    jsonrpc="2.0", id=rid, error=types.ErrorData(code=-32603, message=reason)
                )
            )
            for rid in self._caps
        ]
        self._caps.clear()
        return out


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
    inflight = Inflight()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        splitter = LineSplitter()
        try:
            async with reader_send:
                try:
                    async for chunk in process.stdout:
                        lines = splitter.feed(chunk, inflight.bound())
                        if splitter.overflowed:
                            splitter.overflowed = False
                            for refusal in inflight.refuse_all():
                                await reader_send.send(refusal)
                        for index in range(len(lines)):
                            item = parse_line(lines[index])
                            lines[index] = b""  # a long line is freed before delivery
                            inflight.answered(item)
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
                    inflight.sent(message.message)
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
