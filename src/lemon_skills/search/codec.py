"""The byte form of an index, for an on-disk cache: arrays stored raw, so ``loads`` over a
memory-mapped file reads only the pages a query touches.

An index updated from one read from a file (its rows an ``Overlay`` of that file's) can be
stored as a *delta* of that file: everything but the rows, plus the renumbering of the file's
documents and the rows of the documents that changed. Writing it costs what changed, not the
whole index, and reading it back reads the file's rows in place. The caller names the base
with a tag of its choosing (its file's identity), so a delta is never read over another base.
"""

from __future__ import annotations

import marshal
import mmap
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lemon_skills.search import postings as rows_mod
from lemon_skills.search.analysis import LazyItems, Shorts
from lemon_skills.search.index import Index, assemble, stamps
from lemon_skills.search.schema import BUILD_FIELDS, FORMAT, Weights
from lemon_skills.search.store import Store, StoredState, doc_state, encode_state

_MAGIC = b"LEMONIDX"
_HEAD = struct.Struct("<8sQ")
_BLOBS = 10
Data = bytes | memoryview | mmap.mmap


def dumps(index: Index) -> bytes:
    """The index as bytes for ``loads``: self-contained except for the weights. Arrays are
    stored raw, so ``loads`` over a memory-mapped file reads only the pages a query touches."""
    return b"".join(dump_chunks(index))


def plain_rows(index: Index) -> rows_mod.Rows | None:
    """``index``'s rows when they are plain (not an overlay): what a delta of an index
    updated from it is made over."""
    rows = None if index.store is None else index.store.rows
    return rows if isinstance(rows, rows_mod.Rows) else None


def needs_merge(index: Index) -> bool:
    """Whether ``index`` is an update grown too far from the rows it reads through to be
    stored as a delta (``postings.Overlay.heavy``): store it whole, merging as it is written."""
    rows = None if index.store is None else index.store.rows
    return isinstance(rows, rows_mod.Overlay) and rows.heavy


def delta_base(index: Index) -> rows_mod.Rows | None:
    """The plain rows ``index`` reads its own through, when it is an updated index: it can be
    stored as a delta of a file holding exactly these."""
    rows = None if index.store is None else index.store.rows
    return rows.base if isinstance(rows, rows_mod.Overlay) else None


def dump_chunks(
    index: Index, *, base_tag: str | None = None, done: Callable[[], None] | None = None
) -> Iterable[bytes | memoryview]:
    """``dumps`` in pieces, to write one after the other without joining them first; with
    ``base_tag``, a delta of the stored index whose rows are ``delta_base(index)``
    (``base_tag`` is what ``loads`` will be told that stored index is). The rows of an
    overlay stored whole are merged as they are written, a run of terms at a time, never
    all in memory (``done`` is called after each run, see ``postings.Overlay.chunks``).

    Raises:
        ValueError: a delta of an index that is not an overlay of stored rows.
    """
    store = _require_store(index)
    state = doc_state(store)
    shorts = state.shorts
    renumber = np.zeros(0, np.int32)
    rows = store.rows
    if base_tag is None:
        docs = [shorts.blob(i) for i in range(len(shorts))]
        columns = _columns(rows, done)
    else:
        if not isinstance(rows, rows_mod.Overlay):
            raise ValueError("only an updated index is stored as a delta")
        renumber = rows.renumber
        source = _sources(renumber, len(shorts))
        # A document taken from the base keeps the base's bytes: stored empty here.
        docs = [shorts.blob(i) if s < 0 else b"" for i, s in enumerate(source.tolist())]
        columns = _columns(rows.added, done)
    dtype, n_rows, term, doc, tf = columns
    head = marshal.dumps(
        (
            FORMAT,
            sys.byteorder,
            index.weights.fingerprint(BUILD_FIELDS),
            str(dtype),
            n_rows,
            store.lengths.shape,
            base_tag,
        )
    )
    meta = marshal.dumps(
        (  # type: ignore[arg-type]  # stamps are tuples of strings and numbers
            index.keys,
            index.priority,
            dict(index.names),
            dict(index.lexicon),
            store.terms,
            stamps(index),
        )
    )
    lengths = [len(b) for b in docs]
    ends = np.cumsum(lengths, dtype=np.int64)
    width = store.lengths.shape[1]
    blobs: list[tuple[int, Iterable[bytes | memoryview]]] = [
        _whole(head),
        _whole(meta),
        _whole(encode_state(state)),
        _whole(ends.tobytes()),
        (sum(lengths), docs),
        (4 * n_rows, term),
        (4 * n_rows, doc),
        (n_rows * width * dtype.itemsize, tf),
        _whole(_raw(store.lengths)),
        _whole(_raw(renumber)),
    ]
    return _framed(blobs)


Column = Iterable[bytes | memoryview]


def _columns(
    rows: rows_mod.AnyRows, done: Callable[[], None] | None
) -> tuple[np.dtype[Any], int, Column, Column, Column]:
    """The count type, the number and the three columns of ``rows``, plain, as bytes: an
    overlay's merged a run at a time, once per column."""
    if isinstance(rows, rows_mod.Rows):
        return rows.tf.dtype, len(rows), [_raw(rows.term)], [_raw(rows.doc)], [_raw(rows.tf)]
    merge = rows.merge(done)
    term, doc, tf = ((_raw(a) for a in merge.column(c)) for c in ("term", "doc", "tf"))
    return merge.dtype, merge.size, term, doc, tf


def _whole(data: bytes | memoryview) -> tuple[int, Iterable[bytes | memoryview]]:
    return len(data), [data]


def _framed(blobs: list[tuple[int, Column]]) -> Iterator[bytes | memoryview]:
    offsets = []
    at = _HEAD.size + 8 * 2 * len(blobs)
    for size, _ in blobs:
        at += -at % 8
        offsets.append((at, size))
        at += size
    yield _HEAD.pack(_MAGIC, len(blobs))
    yield struct.pack(f"<{2 * len(blobs)}Q", *(v for pair in offsets for v in pair))
    at = _HEAD.size + 8 * 2 * len(blobs)
    for (start, size), (_, parts) in zip(offsets, blobs, strict=True):
        yield b"\0" * (start - at)
        written = 0
        for part in parts:
            written += len(part)
            yield part
        if written != size:
            raise ValueError("a stored part is not the size announced")
        at = start + size


def _sources(renumber: npt.NDArray[np.int32], n: int) -> npt.NDArray[np.int64]:
    """Per document, the base document it was taken from (-1: none)."""
    source = np.full(n, -1, dtype=np.int64)
    kept = np.flatnonzero(renumber >= 0)
    source[renumber[kept]] = kept
    return source


def _raw(array: npt.NDArray[Any]) -> memoryview:
    """An array's bytes without copying them (a memory-mapped one's straight from its file)."""
    return np.ascontiguousarray(array).data.cast("B")


def _require_store(index: Index) -> Store:
    if index.store is None:
        raise ValueError("this index has no stored form")
    return index.store


@dataclass(frozen=True, slots=True)
class _Stored:
    """One stored index or delta, its arrays read in place."""

    head: tuple[Any, ...]
    blobs: list[memoryview]
    rows: rows_mod.Rows
    lengths: npt.NDArray[np.int32]
    renumber: npt.NDArray[np.int32]
    ends: list[int]

    @property
    def base_tag(self) -> str | None:
        tag: str | None = self.head[6]
        return tag

    def shorts(self) -> _Blobs:
        return _Blobs(self.blobs[4], self.ends)


class _Blobs(LazyItems[memoryview]):
    """Each document's stored short fields, sliced from the file when asked for."""

    def __init__(self, text: memoryview, ends: list[int]) -> None:
        self._text = text
        self._ends = ends

    def __len__(self) -> int:
        return len(self._ends)

    def _at(self, i: int) -> memoryview:
        return self._text[self._ends[i - 1] if i > 0 else 0 : self._ends[i]]


class _Merged(LazyItems[memoryview]):
    """A delta's documents' short fields: their own, or their base document's."""

    def __init__(self, own: _Blobs, base: _Blobs, source: list[int]) -> None:
        self._own = own
        self._base = base
        self._source = source

    def __len__(self) -> int:
        return len(self._source)

    def _at(self, i: int) -> memoryview:
        s = self._source[i]
        return self._base[s] if s >= 0 else self._own[i]


def _parse(data: Data, weights: Weights) -> _Stored:
    view = memoryview(data)
    try:
        magic, count = _HEAD.unpack_from(view, 0)
        if magic != _MAGIC or count != _BLOBS:
            raise ValueError("not a search index")
        flat = struct.unpack_from(f"<{2 * count}Q", view, _HEAD.size)
        blobs = [view[flat[k] : flat[k] + flat[k + 1]] for k in range(0, 2 * count, 2)]
        head = marshal.loads(blobs[0])  # noqa: S302 - our own cache file
        fmt, order, fingerprint, dtype, n_rows, shape, _ = head
    except (EOFError, TypeError, ValueError, struct.error) as exc:
        raise ValueError("not a search index") from exc
    if (fmt, order, fingerprint) != (FORMAT, sys.byteorder, weights.fingerprint(BUILD_FIELDS)):
        raise ValueError("search index of another format")
    if shape[1] != len(weights.fields):
        raise ValueError("not a search index")
    try:
        rows = rows_mod.Rows(
            np.frombuffer(blobs[5], dtype=np.int32, count=n_rows),
            np.frombuffer(blobs[6], dtype=np.int32, count=n_rows),
            np.frombuffer(blobs[7], dtype=np.dtype(dtype)).reshape(n_rows, shape[1]),
        )
        lengths = np.frombuffer(blobs[8], dtype=np.int32).reshape(shape)
        renumber = np.frombuffer(blobs[9], dtype=np.int32)
        ends = np.frombuffer(blobs[3], dtype=np.int64).tolist()
    except (TypeError, ValueError) as exc:
        raise ValueError("not a search index") from exc
    if len(ends) != shape[0]:
        raise ValueError("not a search index")
    return _Stored(tuple(head), blobs, rows, lengths, renumber, ends)


def loads(
    data: Data, weights: Weights, *, base: Data | None = None, base_tag: str | None = None
) -> Index:
    """Rebuild an index from ``dumps`` output (bytes, or a memory map of a file holding
    them); ``weights`` must be those it was built with. A delta (``dump_chunks`` with a
    ``base_tag``) needs ``base``, the stored index it was made over, and that same tag.

    Raises:
        ValueError: the bytes are not an index of this format, machine or build weights, or
            a delta without its base.
    """
    stored = _parse(data, weights)
    rows: rows_mod.AnyRows = stored.rows
    items: Sequence[memoryview] = stored.shorts()
    if stored.base_tag is not None:
        if base is None or base_tag != stored.base_tag:
            raise ValueError("a delta of another search index")
        under = _parse(base, weights)
        if under.base_tag is not None or len(stored.renumber) != len(under.ends):
            raise ValueError("a delta of another search index")
        rows = rows_mod.overlay(under.rows, stored.renumber.copy(), stored.rows, merge=False)
        source = _sources(stored.renumber, len(items)).tolist()
        items = _Merged(stored.shorts(), under.shorts(), source)
    try:
        keys, priority, names, lexicon, terms, doc_stamps = marshal.loads(stored.blobs[1])  # noqa: S302
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not a search index") from exc
    if len(keys) != len(items) or len(doc_stamps) != len(keys):
        raise ValueError("not a search index")
    shorts = Shorts(items, weights)
    state = StoredState(stored.blobs[2], shorts, tuple(doc_stamps), lexicon)
    ids = {t: i for i, t in enumerate(terms)}
    store = Store(rows, list(terms), ids, stored.lengths, state)
    return assemble(tuple(keys), tuple(priority), store, names, lexicon, weights)
