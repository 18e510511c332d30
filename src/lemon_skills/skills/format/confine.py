"""Reads that stay inside a skill directory: a symlink that resolves outside it is refused.

A skill directory may itself be a symlink (tools install skills that way), so containment is
checked on real paths: the file's real path must lie under the skill directory's real path.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

#: The strerror of every refusal, so each view says the same thing.
REFUSED = "refused: symlink resolves outside the skill directory"


def inside(path: str | Path, skill_dir: str | Path) -> bool:
    """True when ``path`` resolves to ``skill_dir`` itself or to something under it."""
    real = os.path.realpath(path)
    root = os.path.realpath(skill_dir)
    return real == root or real.startswith(os.path.join(root, ""))


def check(path: str | Path, skill_dir: str | Path) -> None:
    """Raise ``PermissionError`` (strerror ``REFUSED``) when ``path`` escapes ``skill_dir``."""
    if not inside(path, skill_dir):
        raise PermissionError(errno.EACCES, REFUSED, str(path))


def read_text(path: str | Path, root: str | Path | None = None) -> str:
    """Read an instructions file as UTF-8, refusing it when it resolves outside ``root``.

    ``root`` defaults to the file's own directory: for ``SKILL.md`` that is the skill directory.

    Raises:
        PermissionError: the file resolves outside ``root``.
        OSError, UnicodeDecodeError: it cannot be read.
    """
    check(path, os.path.dirname(path) if root is None else root)
    with open(path, encoding="utf-8") as fh:
        return fh.read()
