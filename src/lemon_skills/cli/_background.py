"""Work a command leaves to a detached process once it has answered."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path


def index_later(cwd: Path | None) -> None:
    """Build the full ranking index in a detached process when this command answered from an
    index focused on its request, so the next command finds it built; one such build per tree
    at a time (``LEMON_BACKGROUND_INDEX=0``: never)."""
    if os.environ.get("LEMON_BACKGROUND_INDEX", "1") == "0":
        return
    from lemon_skills.skills import api

    if not api.index_pending(cwd=cwd):
        return
    where = [] if cwd is None else ["--cwd", str(cwd)]
    _detached(
        [sys.executable, "-m", "lemon_skills", "skill", "index", "--quiet", "--if-idle", *where]
    )


def _detached(argv: list[str]) -> None:
    """Start ``argv`` in its own session with no terminal I/O and never wait for it: this
    process exits first, and the child is then reaped by init."""
    with contextlib.suppress(OSError):
        if hasattr(os, "posix_spawn"):
            quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
            os.posix_spawn(argv[0], argv, os.environ, file_actions=quiet, setsid=True)
            return
        # Where there is no posix_spawn (Windows).
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
