"""A stdio server's stderr: the last lines in memory, the last megabytes on disk.

The server writes into a pipe we own. Its output is read by an event-loop reader callback (no
task, so no task group wraps the caller's exceptions), kept as the last ``MEMORY_LINES`` lines
for error messages and status (shown through ``logs.redact``: a model reads them), and appended
to ``<agent>/mcp-logs/<server>-<digest>.log`` (0600), which is rotated once it passes
``DISK_BYTES`` so the newest ``DISK_BYTES`` always survive (``lemon mcp logs``). The end of
the pipe tells that the server process has gone even while no event loop runs (the
synchronous facade between calls).
"""

from __future__ import annotations

import asyncio
import os
import select
import time
from collections import deque
from collections.abc import Iterator
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from lemon_skills.mcp.session.logs import redact
from lemon_skills.paths import agent_dir

if TYPE_CHECKING:
    from lemon_skills.mcp.config.entries import ServerBase

#: Lines of a server's stderr kept in memory.
MEMORY_LINES = 200
#: Bytes of a server's stderr kept on disk (the current file; the previous one is kept too).
DISK_BYTES = 2 * 1024 * 1024
#: A longer line is cut in memory (the disk copy keeps it whole).
MAX_LINE_CHARS = 2000


def log_path(cfg: ServerBase) -> Path:
    """Where ``cfg``'s stderr is kept: one file per server name and configuration."""
    return agent_dir() / "mcp-logs" / f"{cfg.name or 'server'}-{cfg.digest()[:8]}.log"


class StderrLog:
    """The lines a server wrote to stderr, as far as they are kept."""

    def __init__(self, path: Path | None = None) -> None:
        self.lines: deque[str] = deque(maxlen=MEMORY_LINES)
        self.path = path
        self._partial = b""
        self._file: BinaryIO | None = None
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        """Take one chunk of output (any split; lines are reassembled)."""
        self._write(chunk)
        *complete, self._partial = (self._partial + chunk).split(b"\n")
        for raw in complete:
            self._keep(raw)
        if len(self._partial) > MAX_LINE_CHARS * 4:
            self._keep(self._partial)
            self._partial = b""

    def finish(self) -> None:
        """The pipe ended: keep an unterminated last line and close the disk file."""
        if self._partial:
            self._keep(self._partial)
            self._partial = b""
        if self._file is not None:
            self._file.close()
            self._file = None

    def tail(self, count: int = 3) -> list[str]:
        """The last ``count`` non-blank lines, secrets masked."""
        return [redact(ln) for ln in self.lines if ln.strip()][-count:]

    def summary(self, count: int = 3) -> str:
        """The last lines on one line (``a | b | c``), for error messages."""
        return " | ".join(ln.strip() for ln in self.tail(count))

    def _keep(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        self.lines.append(line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…")

    def _write(self, chunk: bytes) -> None:
        if self.path is None:
            return
        try:
            if self._file is None:
                self._file = _open_append(self.path)
                self._size = self._file.tell()
            if self._size + len(chunk) > DISK_BYTES:
                self._file.close()
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                self._file = _open_append(self.path)
                self._size = 0
            self._file.write(chunk)
            self._file.flush()
            self._size += len(chunk)
        except OSError:
            # The disk copy is a convenience; a full or read-only disk must not cost the server.
            self.path = None


class StderrPipe:
    """The pipe a stdio server writes its stderr into, read into a ``StderrLog``."""

    def __init__(self, log: StderrLog) -> None:
        self.log = log
        self._fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poll: select.poll | None = None
        self.ended = False

    def open(self, stack: AsyncExitStack) -> TextIO:
        """The write end for the child (close ours once it is spawned); closed with ``stack``.

        Outside asyncio the output is discarded.
        """
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed by the stack
            stack.callback(sink.close)
            return sink
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._fd = read_fd
        self._loop.add_reader(read_fd, self._on_readable)
        if hasattr(select, "poll"):
            self._poll = select.poll()
            self._poll.register(read_fd, select.POLLIN)
        stack.callback(self._close)
        writer = os.fdopen(write_fd, "w", encoding="utf-8")
        stack.callback(close_quietly, writer)
        return writer

    def gone(self) -> bool:
        """Whether every writer has closed the pipe: the server (and anything it started
        with the same stderr) has exited. Reads what is pending; never blocks.

        Asked before every request, so the usual answer (nothing pending) costs one
        zero-timeout poll, not a read that fails with ``BlockingIOError``.
        """
        if not self.ended and self._fd is not None and (self._poll is None or self._poll.poll(0)):
            self._drain()
        return self.ended

    def _on_readable(self) -> None:
        self._drain()

    def _drain(self) -> None:
        assert self._fd is not None
        for _ in range(64):
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._end()
                return
            self.log.feed(chunk)

    def _end(self) -> None:
        self.ended = True
        if self._loop is not None and self._fd is not None:
            self._loop.remove_reader(self._fd)
        self.log.finish()

    def _close(self) -> None:
        if self._fd is None:
            return
        if not self.ended:
            with suppress(OSError):
                self._drain()
        if self._loop is not None:
            self._loop.remove_reader(self._fd)
        self._poll = None
        os.close(self._fd)
        self._fd = None
        self.log.finish()


def read_log(path: Path, *, max_bytes: int = DISK_BYTES) -> bytes:
    """The newest ``max_bytes`` of a server's stderr log (rotated part included)."""
    parts = []
    for p in (path.with_name(path.name + ".1"), path):
        with suppress(FileNotFoundError):
            parts.append(p.read_bytes())
    data = b"".join(parts)
    return data[-max_bytes:]


def follow(path: Path, *, poll_s: float = 0.5) -> Iterator[bytes]:
    """What is appended to ``path`` after this call (across rotations), as it comes; the
    iterator never ends."""
    start = path.stat().st_size if path.exists() else 0
    return _follow(path, start, poll_s)


def _follow(path: Path, offset: int, poll_s: float) -> Iterator[bytes]:
    while True:
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < offset:
            offset = 0  # rotated: the new file starts from zero
        if size > offset:
            with path.open("rb") as f:
                f.seek(offset)
                chunk = f.read(size - offset)
            offset += len(chunk)
            yield chunk
        else:
            time.sleep(poll_s)


def close_quietly(f: TextIO | BinaryIO) -> None:
    """Close ``f`` unless it already is."""
    if not f.closed:
        f.close()


def _open_append(path: Path) -> BinaryIO:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    f = os.fdopen(fd, "ab")
    f.seek(0, os.SEEK_END)
    return f
