"""Work a command leaves to a detached process once it has answered."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

#: Runs the command from ``/``: the caller's directory (a cloned repository) must not be the
#: child's working directory, where a relative path or a stray module could be picked up.
_FROM_ROOT = ("/bin/sh", "-c", 'cd / && exec "$0" "$@"')


def index_later(cwd: Path | None) -> None:
    """Build the full ranking index in a detached process when this command answered from an
    index focused on its request, so the next command finds it built; one such build per tree
    at a time, claimed before it is spawned (``LEMON_BACKGROUND_INDEX=0``: never)."""
    if os.environ.get("LEMON_BACKGROUND_INDEX", "1") == "0":
        return
    from lemon_skills.skills.selection import relevance

    try:
        project = (cwd or Path.cwd()).absolute()
    except OSError:
        return  # the working directory is gone: there is no project to pass
    if not relevance.claim_background_index(cwd=cwd):
        return
    # -P: the interpreter does not put the working directory first on sys.path (a project
    # holding a ``lemon_skills/`` folder would be imported instead of this package); unlike
    # -I it keeps PYTHONPATH and the user site, which installs rely on.
    _detached(
        [sys.executable, "-P", "-m", "lemon_skills", "skill", "index", "--quiet", "--if-idle"]
        + ["--cwd", str(project)]
    )


def refresh_later(cwd: Path | None) -> None:
    """Refresh in a detached process the saved MCP skill listings this command answered from
    past the lifetime their servers gave them; one refresh per set of servers at a time,
    claimed before it is spawned (``LEMON_BACKGROUND_INDEX=0``: never)."""
    if os.environ.get("LEMON_BACKGROUND_INDEX", "1") == "0":
        return
    from lemon_skills.tools.mcp_skills import claim_refresh

    try:
        project = (cwd or Path.cwd()).absolute()
    except OSError:
        return
    if claim_refresh(cwd):
        _detached(
            [sys.executable, "-P", "-m", "lemon_skills", "mcp", "refresh-skills", "--quiet"]
            + ["--cwd", str(project)]
        )


def _detached(argv: list[str]) -> None:
    """Start ``argv`` from ``/`` in its own session with no terminal I/O and never wait for
    it: this process exits first, and the child is then reaped by init."""
    with contextlib.suppress(OSError):
        if hasattr(os, "posix_spawn") and os.path.exists(_FROM_ROOT[0]):
            quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
            spawn = [*_FROM_ROOT, *argv]
            os.posix_spawn(spawn[0], spawn, os.environ, file_actions=quiet, setsid=True)
            return
        # Where there is no posix_spawn (Windows).
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            argv,
            cwd=os.path.abspath(os.sep),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
