"""A local directory as a skill source: copied (symlinks kept as links for the audit to see)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from lemon_skills._proc import ProgressFn
from lemon_skills.errors import SourceError
from lemon_skills.skills.format.bundle import HARD_MAX_BYTES, HARD_MAX_FILES, IGNORED_DIRS, hash_dir
from lemon_skills.skills.install.sources.base import Fetched, SourceSpec, Trust, VersionField


class LocalSource:
    """Copies ``location/subdir``; its version is the bundle hash of that directory."""

    trust: Trust = "trusted"
    version_field: VersionField = "bundle_hash"

    def fetch(self, spec: SourceSpec, dest: Path, *, progress: ProgressFn | None) -> Fetched:
        """Copy the source directory to ``dest`` without following symlinks.

        Raises:
            SourceError: the directory is missing, too large, or holds a device or fifo.
        """
        src = _root(spec)
        _check_size(src)
        try:
            shutil.copytree(
                src,
                dest,
                symlinks=True,
                ignore=shutil.ignore_patterns(*IGNORED_DIRS),
                copy_function=shutil.copy2,
            )
        except (OSError, shutil.Error) as exc:
            raise SourceError(f"cannot copy {src}: {exc}") from exc
        return Fetched(root=dest)

    def latest(self, spec: SourceSpec) -> str:
        """The bundle hash of the source directory as it is now.

        Raises:
            SourceError: the directory no longer exists.
        """
        return hash_dir(_root(spec))


def _root(spec: SourceSpec) -> Path:
    base = Path(spec.location)
    src = base / spec.subdir if spec.subdir else base
    if not src.is_dir():
        raise SourceError(f"local source {src} is not a directory")
    if not Path(os.path.realpath(src)).is_relative_to(os.path.realpath(base)):
        raise SourceError(f"{src} leads outside {base} through a symlink")
    return src


def _check_size(src: Path) -> None:
    """Refuse before copying anything that is clearly not a skill (a home directory, say)."""
    count = size = 0
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                raise SourceError(
                    f"{os.path.join(dirpath, name)} is not a regular file; "
                    "a skill holds only files and directories"
                )
            count += 1
            size += st.st_size
            if count > HARD_MAX_FILES or size > HARD_MAX_BYTES:
                raise SourceError(
                    f"{src} holds over {HARD_MAX_FILES} files or {HARD_MAX_BYTES} bytes; "
                    "it is not a skill directory",
                    hint="point at the directory that holds SKILL.md (or --path SUBDIR)",
                )
