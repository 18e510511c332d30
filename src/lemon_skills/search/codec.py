"""The byte form of an index, for an on-disk cache: arrays stored raw, so ``loads`` over a
memory-mapped file reads only the pages a query touches."""

from __future__ import annotations

import marshal
import mmap
import struct
import sys
from typing import Any

import numpy as np
import numpy.typing as npt

from lemon_skills.search import postings as rows_mod
from lemon_skills.search.analysis import Shorts
from lemon_skills.search.index import Index, assemble, stamps
from lemon_skills.search.schema import BUILD_FIELDS, FORMAT, Weights
from lemon_skills.search.store import Store, StoredState, doc_state, encode_state

_MAGIC = b"LEMONIDX"
_HEAD = struct.Struct("<8sQ")


def dumps(index: Index) -> bytes:
    """The index as bytes for ``loads``: self-contained except for the weights. Arrays are
    stored raw, so ``loads`` over a memory-mapped file reads only the pages a query touches."""
    return b"".join(dump_chunks(index))


def dump_chunks(index: Index) -> list[bytes | memoryview]:
    """``dumps`` in pieces, to write one after the other without joining them first."""
    store = _require_store(index)
    rows = store.rows
    meta = marshal.dumps(
        (  # type: ignore[arg-type]  # stamps are tuples of strings and numbers
            FORMAT,
            sys.byteorder,
            index.weights.fingerprint(BUILD_FIELDS),
            index.keys,
            index.priority,
            dict(index.names),
            dict(index.lexicon),
            store.terms,
            str(rows.tf.dtype),
            len(rows),
            store.lengths.shape,
            stamps(index),
        )
    )
    state = doc_state(store)
    docs = [state.shorts.blob(i) for i in range(len(state.shorts))]
    ends = np.cumsum([len(b) for b in docs], dtype=np.int64)
    blobs: list[list[bytes | memoryview]] = [
        [meta],
        [encode_state(state)],
        [ends.tobytes()],
        docs,
        [_raw(rows.term)],
        [_raw(rows.doc)],
        [_raw(rows.tf)],
        [_raw(store.lengths)],
    ]
    offsets = []
    at = _HEAD.size + 8 * 2 * len(blobs)
    out: list[bytes | memoryview] = []
    for parts in blobs:
        pad = -at % 8
        at += pad
        size = sum(len(p) for p in parts)
        offsets.append((at, size))
        out += [b"\0" * pad, *parts]
        at += size
    table = struct.pack(f"<{2 * len(blobs)}Q", *(v for pair in offsets for v in pair))
    return [_HEAD.pack(_MAGIC, len(blobs)), table, *out]


def _raw(array: npt.NDArray[Any]) -> memoryview:
    """An array's bytes without copying them (a memory-mapped one's straight from its file)."""
    return np.ascontiguousarray(array).data.cast("B")


def _require_store(index: Index) -> Store:
    if index.store is None:
        raise ValueError("this index has no stored form")
    return index.store


def loads(data: bytes | memoryview | mmap.mmap, weights: Weights) -> Index:
    """Rebuild an index from ``dumps`` output (bytes, or a memory map of a file holding
    them); ``weights`` must be those it was built with.

    Raises:
        ValueError: the bytes are not an index of this format, machine or build weights.
    """
    view = memoryview(data)
    try:
        magic, count = _HEAD.unpack_from(view, 0)
        if magic != _MAGIC or count != 8:
            raise ValueError("not a search index")
        flat = struct.unpack_from(f"<{2 * count}Q", view, _HEAD.size)
        blobs = [view[flat[k] : flat[k] + flat[k + 1]] for k in range(0, 2 * count, 2)]
        meta = marshal.loads(blobs[0])  # noqa: S302 - our own cache file
        (
            fmt,
            order,
            fingerprint,
            keys,
            priority,
            names,
            lexicon,
            terms,
            dtype,
            n_rows,
            shape,
            stamps,
        ) = meta
    except (EOFError, TypeError, ValueError, struct.error) as exc:
        raise ValueError("not a search index") from exc
    if (fmt, order, fingerprint) != (FORMAT, sys.byteorder, weights.fingerprint(BUILD_FIELDS)):
        raise ValueError("search index of another format")
    if len(keys) != shape[0] or shape[1] != len(weights.fields):
        raise ValueError("not a search index")
    try:
        rows = rows_mod.Rows(
            np.frombuffer(blobs[4], dtype=np.int32, count=n_rows),
            np.frombuffer(blobs[5], dtype=np.int32, count=n_rows),
            np.frombuffer(blobs[6], dtype=np.dtype(dtype)).reshape(n_rows, shape[1]),
        )
        lengths = np.frombuffer(blobs[7], dtype=np.int32).reshape(shape)
        ends = np.frombuffer(blobs[2], dtype=np.int64).tolist()
    except (TypeError, ValueError) as exc:
        raise ValueError("not a search index") from exc
    if len(ends) != len(keys) or len(stamps) != len(keys):
        raise ValueError("not a search index")
    text = blobs[3]
    shorts = Shorts([text[a:b] for a, b in zip([0, *ends], ends, strict=False)], weights)
    state = StoredState(blobs[1], shorts, tuple(stamps), lexicon)
    ids = {t: i for i, t in enumerate(terms)}
    store = Store(rows, list(terms), ids, lengths, state)
    return assemble(tuple(keys), tuple(priority), store, names, lexicon, weights)
