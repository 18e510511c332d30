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


def read_text(skill_dir: str | Path, rel: str = "SKILL.md") -> str:
    """Read ``skill_dir/rel`` as UTF-8, refusing a path that resolves outside ``skill_dir``.

    Raises:
        PermissionError: the file resolves outside the skill directory.
        OSError, UnicodeDecodeError: it cannot be read.
    """
    path = os.path.join(skill_dir, rel)
    check(path, skill_dir)
    with open(path, encoding="utf-8") as fh:
        return fh.read()
