"""Keep built ranking indexes on disk so a fresh process (``lemon skill find``) starts fast.

One file per skill tree: its name is a digest of where the skills come from and of the
scorer's constants (``index.tree_key``), not of their text, so an edit does not miss it. The
file records each skill's stat signature; a process that finds skills added, edited or
removed since updates the stored index, re-reading only those skills, and writes what changed
beside it (``KEY.delta``: everything but the rows, plus the rows of the changed skills), so
an edit costs what it changed, not the size of the tree; once the changes outgrow an eighth
of the index it is written whole again. The files are memory-mapped, so a query reads only
the pages of the terms it touches.
The cache is an optimisation only: an unreadable, corrupt or unwritable cache falls back to
building in memory, never to an error.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from lemon_skills._fs import claim_file, locked, write_bytes_atomic
from lemon_skills._gc import gc_paused
from lemon_skills.paths import agent_dir
from lemon_skills.search import Index as SearchIndex
from lemon_skills.search import codec
from lemon_skills.search.postings import Rows
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import index as index_mod

#: Below this many skills building is cheaper than reading a file.
MIN_SKILLS = 64
#: Cached indexes kept (one per skill tree: several projects).
KEEP = 8
#: From this many skills, the first query of a tree whose index was never built is answered
#: from an index focused on it (``index.focused_index``): indexing every body takes seconds.
FOCUS_MIN = 2_000
#: A background build's claim older than this is a build that died (a build takes seconds).
CLAIM_STALE_S = 600.0

#: The last index of each tree this process built or read, so an edit seen by a running
#: agent updates it in memory rather than from the file.
_LAST: dict[str, index_mod.Index] = {}
#: The trees this process answered a query of from a focused index.
_FOCUSED: set[str] = set()


@dataclass(frozen=True, slots=True)
class _Base:
    """A cache file's rows as this process read or wrote them, and the file's identity then:
    an index updated from those rows is written as a delta of that file."""

    rows: Rows
    tag: str
    mapped: mmap.mmap | None = None  # the file's memory map, when the rows are read from it

    def release(self) -> None:
        """Drop the pages of the file this process has read (they are read again if needed):
        merging every row must not keep all of them resident."""
        if self.mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
            with contextlib.suppress(OSError, ValueError):
                self.mapped.madvise(mmap.MADV_DONTNEED)


_BASES: dict[Path, _Base] = {}


def cache_dir() -> Path:
    """Where cached indexes live (``$LEMON_AGENT_DIR/cache/ranking``)."""
    return agent_dir() / "cache" / "ranking"


@contextlib.contextmanager
def exclusive(
    entries: Sequence[Entry], *, weights: index_mod.Weights = index_mod.DEFAULT_WEIGHTS
) -> Iterator[bool]:
    """Hold the right to build this tree's index: False while another process holds it (a
    background build already under way)."""
    from filelock import Timeout

    try:
        with locked(cache_dir() / index_mod.tree_key(entries, weights), timeout=0):
            yield True
    except Timeout:
        yield False


def claim_build(entries: Sequence[Entry], *, now: float | None = None) -> bool:
    """Claim this tree's one background build, before spawning it: False while another
    process's claim stands (parallel commands must not each start a build). The claim is a
    file its build removes (``release_build``); a claim older than ``CLAIM_STALE_S`` (a build
    that died) is taken over."""
    path = _claim_path(index_mod.tree_key(entries, index_mod.DEFAULT_WEIGHTS))
    return claim_file(path, stale_s=CLAIM_STALE_S, now=now)


def release_build(entries: Sequence[Entry]) -> None:
    """End the claim of ``claim_build``."""
    with contextlib.suppress(OSError):
        _claim_path(index_mod.tree_key(entries, index_mod.DEFAULT_WEIGHTS)).unlink()


def _claim_path(key: str) -> Path:
    return cache_dir() / f"{key}.building"


def first_query_index(
    entries: Sequence[Entry],
    query: str,
    *,
    weights: index_mod.Weights = index_mod.DEFAULT_WEIGHTS,
) -> index_mod.Index | None:
    """An index focused on ``query`` when it is the first query of a tree of ``FOCUS_MIN`` or
    more skills whose index is neither in this process nor on disk; None otherwise (rank
    with ``load_or_build``). A tree gets one focused answer per process: the next query
    builds its index."""
    if len(entries) < FOCUS_MIN:
        return None
    key = index_mod.tree_key(entries, weights)
    if key in _LAST or key in _FOCUSED or (_cached(entries) and _index_path(key).exists()):
        return None
    _FOCUSED.add(key)
    with gc_paused():  # millions of short-lived words and no cycles among them
        return index_mod.focused_index(entries, query, weights=weights)


def load_or_build(
    entries: Sequence[Entry], *, weights: index_mod.Weights = index_mod.DEFAULT_WEIGHTS
) -> index_mod.Index:
    """The index of ``entries``: the cached one, updated for what changed since, else built.

    A changed index is written back over its file, so the next process reads it as is.
    """
    if not _cached(entries):
        return index_mod.build_index(entries, weights=weights)
    key = index_mod.tree_key(entries, weights)
    path = _index_path(key)
    last = _LAST.get(key)
    with gc_paused():
        if last is not None and last.weights == weights:
            previous: SearchIndex | None = last.core
        else:
            previous = _read(path, weights)
        if previous is not None:
            # Not merged in memory: a large update is merged as it is written (``_write``).
            index = index_mod.update_index(previous, entries, merge=False)
            if index.core is not previous:
                index = _write(path, index, weights)
    if previous is None:
        index = _write(path, index_mod.build_index(entries, weights=weights), weights)
    _LAST[key] = index
    return index


def _cached(entries: Sequence[Entry]) -> bool:
    """Whether the index of ``entries`` is kept on disk (large enough, cache not turned off)."""
    return len(entries) >= MIN_SKILLS and not os.environ.get("LEMON_NO_INDEX_CACHE")


def _index_path(key: str) -> Path:
    return cache_dir() / f"{key}.idx"


def _delta(path: Path) -> Path:
    return path.with_suffix(".delta")


def _identity(st: os.stat_result) -> str:
    """Which version of a file this is: replacing it (atomically, by rename) changes it."""
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


def _read(path: Path, weights: index_mod.Weights) -> SearchIndex | None:
    try:
        with path.open("rb") as fh:
            tag = _identity(os.fstat(fh.fileno()))
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        index = _read_delta(path, data, tag, weights) or index_mod.loads(data, weights=weights)
    except (OSError, ValueError):
        return None
    rows = codec.plain_rows(index) or codec.delta_base(index)
    if rows is not None:
        _BASES[path] = _Base(rows, tag, data)
    return index


def _read_delta(
    path: Path, base: mmap.mmap, tag: str, weights: index_mod.Weights
) -> SearchIndex | None:
    """The index the delta beside ``path`` stores over it (None: no delta of this file)."""
    try:
        data = _delta(path).read_bytes()
        return index_mod.loads(data, weights=weights, base=base, base_tag=tag)
    except (OSError, ValueError):
        return None


def _write(path: Path, index: index_mod.Index, weights: index_mod.Weights) -> index_mod.Index:
    """Store ``index`` (a delta when it is a light update of the file's rows) and return it,
    or, when its rows were merged into the file as they were written, the file's index."""
    core = index.core
    try:
        known = _BASES.get(path)
        base = codec.delta_base(core)
        on_file = known is not None and base is known.rows and _identity(path.stat()) == known.tag
        if known is not None and on_file and not codec.needs_merge(core):
            chunks = codec.dump_chunks(core, base_tag=known.tag)
            write_bytes_atomic(_delta(path), chunks, durable=False)
            return index
        release = known.release if known is not None and base is known.rows else None
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, codec.dump_chunks(core, done=release), durable=False)
        _delta(path).unlink(missing_ok=True)
        _prune(path.parent)
    except OSError:
        return index
    rows = codec.plain_rows(core)
    if rows is not None:
        _BASES[path] = _Base(rows, _identity(path.stat()))
        return index
    # The merged rows exist only in the file: read them from there.
    merged = _read(path, weights)
    return index if merged is None else index_mod.Index(index.entries, merged)


def _prune(directory: Path) -> None:
    def changed(p: Path) -> float:
        delta = _delta(p)
        return max(p.stat().st_mtime, delta.stat().st_mtime if delta.exists() else 0.0)

    files = sorted(directory.glob("*.idx"), key=changed, reverse=True)
    for old in files[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()
            _delta(old).unlink(missing_ok=True)
