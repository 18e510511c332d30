"""A skill directory as data: its files, symlinks and special files, and the hashes of it all.

``collect`` reads a directory without ever following a symlink; the hashes are pure. The
bundle hash is the sha256 of ``"<relpath>\\t<sha256>"`` lines in path order, so it changes when
any file is added, removed, renamed or edited, and never depends on timestamps.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Directory names never part of a bundle (version-control metadata).
IGNORED_DIRS = frozenset({".git"})
#: Reading stops past these, so a mistaken source (a home directory) cannot exhaust memory.
HARD_MAX_FILES = 2000
HARD_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Bundle:
    """The contents of one skill directory, keyed by POSIX relative path."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    symlinks: Mapping[str, str] = field(default_factory=dict)
    special: tuple[str, ...] = ()
    executables: frozenset[str] = frozenset()
    overflow: str | None = None


def collect(root: Path) -> Bundle:
    """Read every file under ``root`` (symlinks recorded, never followed; ``.git`` skipped)."""
    files: dict[str, bytes] = {}
    links: dict[str, str] = {}
    special: list[str] = []
    execs: set[str] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        rel_dir = base.relative_to(root).as_posix()
        dirnames.sort()
        for d in list(dirnames):
            if d in IGNORED_DIRS or (base / d).is_symlink():
                dirnames.remove(d)
                if d not in IGNORED_DIRS:
                    links[_join(rel_dir, d)] = os.readlink(base / d)
        for name in sorted(filenames):
            if name in IGNORED_DIRS:
                continue
            rel = _join(rel_dir, name)
            st = os.lstat(base / name)
            if stat.S_ISLNK(st.st_mode):
                links[rel] = os.readlink(base / name)
            elif not stat.S_ISREG(st.st_mode):
                special.append(rel)
            elif len(files) >= HARD_MAX_FILES or total + st.st_size > HARD_MAX_BYTES:
                return Bundle(
                    files=files,
                    symlinks=links,
                    special=tuple(special),
                    executables=frozenset(execs),
                    overflow=f"over {HARD_MAX_FILES} files or {HARD_MAX_BYTES} bytes",
                )
            else:
                files[rel] = (base / name).read_bytes()
                total += len(files[rel])
                if st.st_mode & 0o111:
                    execs.add(rel)
    return Bundle(files=files, symlinks=links, special=tuple(special), executables=frozenset(execs))


def _join(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir}/{name}"


def file_hashes(files: Mapping[str, bytes]) -> dict[str, str]:
    """sha256 of every file, keyed by relative path."""
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items())}


def bundle_hash(hashes: Mapping[str, str]) -> str:
    """The hash of a whole bundle from its per-file hashes."""
    lines = "\n".join(f"{rel}\t{h}" for rel, h in sorted(hashes.items()))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def content_hash(files: Mapping[str, bytes]) -> str:
    """sha256 of the bundle's SKILL.md."""
    return hashlib.sha256(files.get("SKILL.md", b"")).hexdigest()


def hash_dir(root: Path) -> str:
    """The bundle hash of a directory on disk."""
    return bundle_hash(file_hashes(collect(root).files))


@dataclass(frozen=True, slots=True, kw_only=True)
class Drift:
    """How a directory differs from the file hashes recorded for it."""

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def describe(self) -> str:
        """``2 changed (SKILL.md, ...), 1 added (x)``."""
        parts = []
        for label, items in (
            ("changed", self.changed),
            ("added", self.added),
            ("removed", self.removed),
        ):
            if items:
                shown = ", ".join(items[:3]) + (", ..." if len(items) > 3 else "")
                parts.append(f"{len(items)} {label} ({shown})")
        return "; ".join(parts)


def drift(expected: Mapping[str, str], bundle: Bundle) -> Drift:
    """Compare a collected directory with recorded per-file hashes.

    A file replaced by a symlink counts as changed; new symlinks and special files as added.
    """
    actual = file_hashes(bundle.files)
    links = set(bundle.symlinks) | set(bundle.special)
    changed = {k for k in actual.keys() & expected.keys() if actual[k] != expected[k]}
    return Drift(
        changed=tuple(sorted(changed | (links & expected.keys()))),
        added=tuple(sorted((actual.keys() | links) - expected.keys())),
        removed=tuple(sorted(expected.keys() - actual.keys() - links)),
    )
