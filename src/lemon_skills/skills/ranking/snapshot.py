"""Keep built ranking indexes on disk so a fresh process (``lemon skill find``) starts fast.

One file per skill tree: its name is a digest of where the skills come from and of the
scorer's constants (``index.tree_key``), not of their text, so an edit does not miss it. The
file records each skill's stat signature; a process that finds skills added, edited or
removed since updates the stored index, re-reading only those skills, and writes it back in
place. The file is memory-mapped, so a query reads only the pages of the terms it touches.
The cache is an optimisation only: an unreadable, corrupt or unwritable cache falls back to
building in memory, never to an error.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Sequence
from pathlib import Path

from lemon_skills._fs import write_bytes_atomic
from lemon_skills.paths import agent_dir
from lemon_skills.search import Index as SearchIndex
from lemon_skills.search import codec
from lemon_skills.skills.model import Entry
from lemon_skills.skills.ranking import index as index_mod

#: Below this many skills building is cheaper than reading a file.
MIN_SKILLS = 64
#: Cached indexes kept (one per skill tree: several projects).
KEEP = 8

#: The last index of each tree this process built or read, so an edit seen by a running
#: agent updates it in memory rather than from the file.
_LAST: dict[str, index_mod.Index] = {}


def cache_dir() -> Path:
    """Where cached indexes live (``$LEMON_AGENT_DIR/cache/ranking``)."""
    return agent_dir() / "cache" / "ranking"


def load_or_build(
    entries: Sequence[Entry], *, weights: index_mod.Weights = index_mod.DEFAULT_WEIGHTS
) -> index_mod.Index:
    """The index of ``entries``: the cached one, updated for what changed since, else built.

    A changed index is written back over its file, so the next process reads it as is.
    """
    if len(entries) < MIN_SKILLS or os.environ.get("LEMON_NO_INDEX_CACHE"):
        return index_mod.build_index(entries, weights=weights)
    key = index_mod.tree_key(entries, weights)
    path = cache_dir() / f"{key}.idx"
    last = _LAST.get(key)
    previous = last.core if last is not None and last.weights == weights else _read(path, weights)
    if previous is not None:
        index = index_mod.update_index(previous, entries)
        if index.core is not previous:
            _write(path, index)
    else:
        index = index_mod.build_index(entries, weights=weights)
        _write(path, index)
    _LAST[key] = index
    return index


def _read(path: Path, weights: index_mod.Weights) -> SearchIndex | None:
    try:
        with path.open("rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return index_mod.loads(data, weights=weights)
    except (OSError, ValueError):
        return None


def _write(path: Path, index: index_mod.Index) -> None:
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, codec.dump_chunks(index.core), durable=False)
        _prune(path.parent)


def _prune(directory: Path) -> None:
    files = sorted(directory.glob("*.idx"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
