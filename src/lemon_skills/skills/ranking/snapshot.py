"""Keep built ranking indexes on disk so a fresh process (``lemon skill find``) starts fast.

The file name is a digest of every indexed skill's key, source and stat signature plus the
scorer's constants, so a change to a skill misses it; the file also holds every skill
tokenised, so the rebuild after a miss re-reads only the changed skills and its file replaces
the stale one. The cache is an optimisation only: an unreadable, corrupt or unwritable cache
falls back to building in memory, never to an error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from lemon_skills._fs import write_bytes_atomic
from lemon_skills.paths import agent_dir
from lemon_skills.skills.model import Entry
from lemon_skills.skills.ranking import index as index_mod

#: Below this many skills building is cheaper than reading a file.
MIN_SKILLS = 64
#: Cached indexes kept (one per distinct skill set: several projects, recent edits).
KEEP = 8


def cache_dir() -> Path:
    """Where cached indexes live (``$LEMON_AGENT_DIR/cache/ranking``)."""
    return agent_dir() / "cache" / "ranking"


def load_or_build(
    entries: Sequence[Entry], *, weights: index_mod.Weights = index_mod.DEFAULT_WEIGHTS
) -> index_mod.Index:
    """The index of ``entries``: read from the cache when it has it, else built and stored.

    A miss (a skill was added, edited or removed) rebuilds from the newest cached index's
    tokenised skills, re-reading only the skills that changed, and the new file replaces that
    one when it was an earlier state of the same skills.
    """
    if len(entries) < MIN_SKILLS or os.environ.get("LEMON_NO_INDEX_CACHE"):
        return index_mod.build_index(entries, weights=weights)
    path = cache_dir() / f"{index_mod.cache_key(entries, weights)}.idx"
    try:
        return index_mod.loads(path.read_bytes(), entries, weights=weights)
    except (OSError, ValueError):
        pass
    previous = _newest(path.parent)
    superseded = False
    # Seeding pays for a new process; one that tokenised these skills before has them.
    if previous is not None and index_mod.untokenised(entries) > len(entries) // 2:
        with contextlib.suppress(OSError, ValueError):
            superseded = index_mod.seed(previous.read_bytes(), entries) >= 0.5
    built = index_mod.build_index(entries, weights=weights)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, index_mod.dumps(built))
        if superseded and previous is not None:
            previous.unlink()
        _prune(path.parent)
    return built


def _newest(directory: Path) -> Path | None:
    with contextlib.suppress(OSError):
        files = list(directory.glob("*.idx"))
        return max(files, key=lambda p: p.stat().st_mtime) if files else None
    return None


def _prune(directory: Path) -> None:
    files = sorted(directory.glob("*.idx"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
