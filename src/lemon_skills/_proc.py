"""The one way lemon-skills runs a subprocess: bounded in time, output captured, errors typed.

Failures (non-zero exit, timeout, missing executable) raise ``CommandError`` carrying the
command, exit status and captured output, so callers never inspect return codes by hand.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lemon_skills.errors import CommandError

#: Receives each progress line a command writes to stderr (``\r``-terminated updates included).
ProgressFn = Callable[[str], None]

DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Completed:
    """A command that exited with status 0."""

    cmd: tuple[str, ...]
    stdout: str
    stderr: str


def run(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_stderr: ProgressFn | None = None,
) -> Completed:
    """Run ``cmd`` (no shell) and return its output.

    ``on_stderr`` streams stderr line by line while the command runs (used for git's progress
    meter); it is still captured in full for the error message.

    Raises:
        CommandError: the command exited non-zero (``returncode`` set), ran longer than
            ``timeout`` seconds or could not be started (``returncode`` None).
    """
    argv = tuple(cmd)
    env_dict = dict(env) if env is not None else None
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env_dict,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a timeout kill must take the command's children too
        )
    except OSError as exc:
        raise CommandError(argv, returncode=None, stderr=f"cannot run {argv[0]}: {exc}") from exc
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out_chunks, None), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err_chunks, on_stderr), daemon=True),
    ]
    for t in readers:
        t.start()
    try:
        code: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        code = None
    for t in readers:
        t.join()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    stdout = b"".join(out_chunks).decode("utf-8", "replace")
    stderr = b"".join(err_chunks).decode("utf-8", "replace")
    if code is None:
        raise CommandError(
            argv, returncode=None, stdout=stdout, stderr=stderr + f"\ntimed out after {timeout}s"
        )
    if code != 0:
        raise CommandError(argv, returncode=code, stdout=stdout, stderr=stderr)
    return Completed(cmd=argv, stdout=stdout, stderr=stderr)


def _drain(stream: object, sink: list[bytes], on_line: ProgressFn | None) -> None:
    read = stream.read1 if hasattr(stream, "read1") else stream.read  # type: ignore[attr-defined]
    pending = b""
    while chunk := read(4096):
        sink.append(chunk)
        if on_line is None:
            continue
        pending += chunk
        *lines, pending = pending.replace(b"\r", b"\n").split(b"\n")
        for line in lines:
            if line.strip():
                on_line(line.decode("utf-8", "replace"))
    if on_line is not None and pending.strip():
        on_line(pending.decode("utf-8", "replace"))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
