"""The posting store: every (term, document) pair's count in each field, in flat arrays.

Rows are sorted by term id, then document number, so one term's documents are one slice
found by two binary searches. A row holds raw counts only: the BM25F weight of a term in a
document also depends on the corpus's mean field lengths, which change with every edit, so
weights are computed from the counts when a query first needs a term (``weigh``). That keeps
an edit to the rows of the documents that changed: an ``Overlay`` reads the rows of the index
it was made from through a document renumbering, plus the rows of the changed documents, so an
edit neither copies nor reads the others; ``patch`` merges them into plain rows when the
overlay grows.
"""

from __future__ import annotations

import itertools
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

#: An overlay is made plain when its rows pass this share of its base's (1/8).
OVERLAY_SHARE = 8
#: Base rows merged at a time when an overlay is written out in ``chunks``.
CHUNK_ROWS = 1 << 18

Ints = npt.NDArray[np.int32]
Counts = npt.NDArray[np.unsignedinteger[Any]]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Rows:
    """Posting rows: ``term`` and ``doc`` per row, ``tf`` (rows x fields) counts."""

    term: Ints
    doc: Ints
    tf: Counts
    # Where each term id's rows start, found on first use (one pass over ``term``).
    _starts: list[int] = field(default_factory=list, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.term)

    def span(self, tid: int) -> tuple[int, int]:
        """The row range of term id ``tid`` (empty when no document holds it)."""
        starts = self._starts
        if not starts:
            top = int(self.term[-1]) + 2 if len(self.term) else 1
            found = np.searchsorted(self.term, np.arange(top, dtype=np.int32)).tolist()
            starts.extend(found)  # one C-level call, so a concurrent reader sees all or none
        if tid + 1 >= len(starts):
            return (0, 0)
        return starts[tid], starts[tid + 1]

    def take(self, mask: npt.NDArray[np.bool_]) -> Rows:
        """The rows where ``mask`` is true."""
        return Rows(self.term[mask], self.doc[mask], self.tf[mask])

    def of_term(self, tid: int) -> tuple[Ints, Counts]:
        """The documents (ascending) holding term ``tid`` and their counts per field."""
        lo, hi = self.span(tid)
        return self.doc[lo:hi], self.tf[lo:hi]

    def held_terms(self) -> Ints:
        """The ids of the terms some document holds, ascending."""
        return np.unique(self.term)

    def doc_counts(self, doc: int, column: int, terms: Sequence[str]) -> Counter[str]:
        """One document's counts in one field."""
        mask = self.doc == doc
        tf = self.tf[mask, column]
        held = tf > 0
        found = [terms[t] for t in self.term[mask][held].tolist()]
        return Counter(dict(zip(found, tf[held].tolist(), strict=True)))

    def plain(self) -> Rows:
        """These rows (already plain)."""
        return self


@dataclass(frozen=True, slots=True)
class Overlay:
    """The rows of an edited index, read through those of the index it was made from:
    ``base``'s rows with each document renumbered by ``renumber`` (-1: dropped), plus
    ``added`` (the rows of the documents not taken from ``base``, in the new numbering).
    Kept documents keep their order, so a term's base rows stay in document order."""

    base: Rows
    renumber: Ints
    added: Rows

    def of_term(self, tid: int) -> tuple[Ints, Counts]:
        """The documents (ascending) holding term ``tid`` and their counts per field."""
        docs, tf = self.base.of_term(tid)
        docs = self.renumber[docs]
        keep = docs >= 0
        if not keep.all():
            docs, tf = docs[keep], tf[keep]
        lo, hi = self.added.span(tid)
        if hi > lo:
            dtype = np.promote_types(tf.dtype, self.added.tf.dtype)
            docs = np.concatenate([docs, self.added.doc[lo:hi]])
            tf = np.concatenate([tf.astype(dtype, copy=False), self.added.tf[lo:hi]])
        if hi > lo:
            order = np.argsort(docs, kind="stable")
            docs, tf = docs[order], tf[order]
        return docs, tf

    def held_terms(self) -> Ints:
        """The ids of the terms some document holds, ascending."""
        kept = self.base.term[self.renumber[self.base.doc] >= 0]
        return np.union1d(np.unique(kept), self.added.held_terms())

    def doc_counts(self, doc: int, column: int, terms: Sequence[str]) -> Counter[str]:
        """One document's counts in one field."""
        if doc in set(self.added.doc.tolist()):
            return self.added.doc_counts(doc, column, terms)
        base_doc = int(np.flatnonzero(self.renumber == doc)[0])
        return self.base.doc_counts(base_doc, column, terms)

    def plain(self) -> Rows:
        """The same rows as plain rows (every row copied once)."""
        return patch(self.base, self.renumber, self.added)

    def weight(self) -> int:
        """How far this overlay is from its base: rows added plus documents dropped, in rows
        (a dropped document counted at the mean rows per document)."""
        dropped = int(np.count_nonzero(self.renumber < 0))
        per_doc = len(self.base) // max(len(self.renumber), 1)
        return len(self.added) + dropped * per_doc

    @property
    def heavy(self) -> bool:
        """Whether the changes have passed 1/``OVERLAY_SHARE`` of the base's rows: every
        lookup pays for an overlay, a merge costs one pass."""
        return self.weight() * OVERLAY_SHARE > len(self.base)

    def merge(self, done: Callable[[], None] | None = None) -> Merge:
        """How these rows merge into plain ones, worked out a run of terms at a time
        (``done`` is called after each run, to release the base's pages)."""
        return Merge(self, done)


AnyRows = Rows | Overlay


@dataclass(frozen=True, slots=True)
class _Run:
    """A run of whole terms: base rows ``lo:hi`` less ``drops`` (positions in the run), with
    added rows ``a_lo:a_hi`` inserted before the kept rows at ``at``."""

    lo: int
    hi: int
    a_lo: int
    a_hi: int
    drops: npt.NDArray[np.intp]
    at: npt.NDArray[np.intp]


class Merge:
    """An overlay's rows as plain rows, one column at a time and a run of terms (about
    ``CHUNK_ROWS`` base rows) at a time: writing them out never holds them all."""

    def __init__(self, over: Overlay, done: Callable[[], None] | None = None) -> None:
        self._over = over
        self._done = done
        self._runs: list[_Run] = []
        self.dtype = np.promote_types(over.base.tf.dtype, over.added.tf.dtype)
        base, added = over.base, over.added
        lo = a_lo = 0
        size = 0
        while lo < len(base) or a_lo < len(added):
            hi = min(len(base), lo + CHUNK_ROWS)
            if hi < len(base):  # end on a term boundary
                hi = int(np.searchsorted(base.term, base.term[hi - 1], side="right"))
                a_hi = int(np.searchsorted(added.term, base.term[hi - 1], side="right"))
            else:
                a_hi = len(added)
            doc = over.renumber[base.doc[lo:hi]]
            keep = doc >= 0
            kept = (base.term[lo:hi][keep].astype(np.int64) << 32) | doc[keep]
            extra = Rows(added.term[a_lo:a_hi], added.doc[a_lo:a_hi], added.tf[a_lo:a_hi])
            at = np.searchsorted(kept, _key(extra))
            self._runs.append(_Run(lo, hi, a_lo, a_hi, np.flatnonzero(~keep), at))
            size += len(kept) + len(at)
            self._release()
            lo, a_lo = hi, a_hi
        #: How many rows the merged rows hold.
        self.size = size

    def _release(self) -> None:
        if self._done is not None:
            self._done()

    def column(self, name: str) -> Iterator[npt.NDArray[Any]]:
        """The merged ``term``, ``doc`` or ``tf`` column, a run at a time."""
        base, added = self._over.base, self._over.added
        for run in self._runs:
            mine = getattr(base, name)[run.lo : run.hi]
            if name == "doc":
                mine = self._over.renumber[mine]
            if len(run.drops):
                mine = np.delete(mine, run.drops, axis=0)
            theirs = getattr(added, name)[run.a_lo : run.a_hi]
            if name == "tf":
                mine, theirs = mine.astype(self.dtype, copy=False), theirs.astype(self.dtype)
            yield np.insert(mine, run.at, theirs, axis=0) if len(theirs) else mine
            self._release()


def overlay(rows: AnyRows, renumber: Ints, added: Rows, *, merge: bool = True) -> AnyRows:
    """``rows`` with each document ``d`` renumbered to ``renumber[d]`` (-1: dropped) and
    ``added`` (sorted, in the new numbering) merged in: an ``Overlay`` that copies nothing
    of ``rows``, or plain rows when documents change places or, with ``merge``, once the
    overlay is ``heavy`` (without, the caller merges it, e.g. ``chunks`` into a file)."""
    if isinstance(rows, Overlay):
        old = rows.renumber
        base, added = rows.base, patch(rows.added, renumber, added)
        renumber = np.where(old >= 0, renumber[np.maximum(old, 0)], -1).astype(np.int32)
    else:
        base = rows
    kept = renumber[renumber >= 0]
    if not np.all(kept[1:] > kept[:-1]):
        return patch(base, renumber, added)
    over = Overlay(base, renumber, added)
    return over.plain() if merge and over.heavy else over


def _counts_dtype(peak: int) -> type[np.uint16] | type[np.uint32]:
    return np.uint16 if peak < 2**16 else np.uint32


class Builder:
    """Collects (document, field, term, count) in compact arrays and sorts them into rows;
    terms not in ``ids`` get the next free ids (``ids`` grows)."""

    def __init__(self, width: int, ids: dict[str, int]) -> None:
        self.width = width
        self.ids = ids
        # Four bytes a count: a build's peak memory is these arrays. The document and field
        # of a count are kept once per ``add`` (with how many counts it added).
        self._term = array("i")
        self._tf = array("i")
        self._add_doc = array("i")
        self._add_col = array("B")
        self._add_size = array("i")

    def add(self, doc: int, col: int, counts: Mapping[str, int]) -> None:
        """Count ``counts`` in field ``col`` of document ``doc`` (each pair added once)."""
        if not counts:
            return
        ids = self.ids
        # Numbered in the order ``counts`` lists them, as each is first seen; lookups stay in
        # C (most terms of a document are known: only the new ones are numbered here).
        new = list(itertools.filterfalse(ids.__contains__, counts))
        if new:
            ids.update(zip(new, itertools.count(len(ids))))
        self._term.extend(map(ids.__getitem__, counts))
        self._tf.extend(counts.values())
        self._add_doc.append(doc)
        self._add_col.append(col)
        self._add_size.append(len(counts))

    def rows(self) -> Rows:
        """The rows collected so far, sorted by term, then document."""
        if not self._term:
            return empty(self.width)
        size = np.frombuffer(self._add_size, dtype=np.int32)
        key = np.frombuffer(self._term, dtype=np.int32).astype(np.int64) << 32
        key |= np.repeat(np.frombuffer(self._add_doc, dtype=np.int32), size)
        # A stable sort (timsort, which the runs of increasing keys each document's new terms
        # make faster than ``np.unique``'s); one (term, document)'s fields become one row.
        order = np.argsort(key, kind="stable")
        key = key[order]
        first = np.empty(len(key), dtype=np.bool_)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        slot = np.cumsum(first) - 1
        uniq = key[first]
        del key, first
        tf_all = np.frombuffer(self._tf, dtype=np.int32)
        tf = np.zeros((len(uniq), self.width), dtype=_counts_dtype(int(tf_all.max())))
        col = np.repeat(np.frombuffer(self._add_col, dtype=np.uint8), size)
        tf[slot, col[order]] = tf_all[order]
        return Rows((uniq >> 32).astype(np.int32), (uniq & 0xFFFFFFFF).astype(np.int32), tf)


def empty(width: int) -> Rows:
    """No rows."""
    return Rows(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros((0, width), dtype=np.uint16))


def patch(rows: Rows, renumber: Ints, added: Rows) -> Rows:
    """``rows`` with each document ``d`` renumbered to ``renumber[d]`` (rows of documents
    mapped to -1 dropped), then ``added`` (sorted, already in the new numbering) merged in."""
    new_doc = renumber[rows.doc] if len(rows) else rows.doc
    gone = np.flatnonzero(new_doc < 0)
    kept_new = renumber[renumber >= 0]
    in_order = bool(np.all(kept_new[1:] > kept_new[:-1]))
    if not in_order or len(added) + len(gone) > len(rows) // 64:
        # Documents changed places (rows are no longer in document order within a term), or
        # so much changed that one sort beats placing each row.
        keep = new_doc >= 0
        kept = Rows(rows.term[keep], new_doc[keep].astype(np.int32, copy=False), rows.tf[keep])
        return _sort(_concat(kept, added))
    at = _insertion_points(rows, renumber, kept_new, added)
    return _splice(Rows(rows.term, new_doc.astype(np.int32, copy=False), rows.tf), gone, at, added)


def _insertion_points(rows: Rows, renumber: Ints, kept_new: Ints, added: Rows) -> list[int]:
    """For each added row, the index of the first old row it goes before."""
    if not len(added):
        return []
    top = int(max(rows.term[-1], added.term[-1])) + 2
    starts = np.searchsorted(rows.term, np.arange(top, dtype=np.int32)).tolist()
    kept_old = np.flatnonzero(renumber >= 0)
    # The first kept document numbered after the added one, in the old numbering: old rows of
    # documents before it precede the added row (those dropped go anyway).
    nxt = np.searchsorted(kept_new, added.doc, side="right")
    bound = np.append(kept_old, len(renumber))[nxt].tolist()
    at = []
    for t, b in zip(added.term.tolist(), bound, strict=True):
        lo, hi = starts[t], starts[t + 1]
        at.append(lo + int(np.searchsorted(rows.doc[lo:hi], b)))
    return at


def _splice(rows: Rows, gone: npt.NDArray[np.intp], at: list[int], added: Rows) -> Rows:
    """``rows`` without rows ``gone``, with ``added[k]`` placed before old row ``at[k]``:
    slices copied once, whatever the number of rows."""
    size = len(rows) - len(gone) + len(added)
    dtype = np.promote_types(rows.tf.dtype, added.tf.dtype)
    out = Rows(
        np.empty(size, np.int32),
        np.empty(size, np.int32),
        np.empty((size, rows.tf.shape[1]), dtype),
    )
    drops = gone.tolist()
    src = dst = gi = ai = 0
    end = len(rows)
    while src < end or ai < len(at):
        stop = min(drops[gi] if gi < len(drops) else end, at[ai] if ai < len(at) else end)
        if stop > src:
            _copy(out, dst, rows, src, stop)
            dst += stop - src
            src = stop
        if ai < len(at) and at[ai] == src:
            k = ai
            while ai < len(at) and at[ai] == src:
                ai += 1
            _copy(out, dst, added, k, ai)
            dst += ai - k
        elif gi < len(drops) and drops[gi] == src:
            src += 1
            gi += 1
    return out


def _copy(out: Rows, dst: int, rows: Rows, lo: int, hi: int) -> None:
    n = hi - lo
    out.term[dst : dst + n] = rows.term[lo:hi]
    out.doc[dst : dst + n] = rows.doc[lo:hi]
    out.tf[dst : dst + n] = rows.tf[lo:hi]


def _concat(a: Rows, b: Rows) -> Rows:
    dtype = np.promote_types(a.tf.dtype, b.tf.dtype)
    return Rows(
        np.concatenate([a.term, b.term]),
        np.concatenate([a.doc, b.doc]),
        np.concatenate([a.tf.astype(dtype, copy=False), b.tf.astype(dtype, copy=False)]),
    )


def _key(rows: Rows) -> npt.NDArray[np.int64]:
    return (rows.term.astype(np.int64) << 32) | rows.doc.astype(np.int64)


def _sort(rows: Rows) -> Rows:
    order = np.argsort(_key(rows), kind="stable")
    return Rows(rows.term[order], rows.doc[order], rows.tf[order])


def norms(
    lengths: Ints, field_weight: Sequence[float], field_b: Sequence[float]
) -> tuple[Floats, list[float]]:
    """Per document and field ``w / (1 - b + b * length / mean)`` (BM25F length
    normalisation), and the mean length of each field (1 when empty)."""
    n = len(lengths)
    means = []
    for j in range(lengths.shape[1]):
        # A Python int sum, as exact as the per-document loop it replaces.
        total = int(lengths[:, j].sum(dtype=np.int64))
        means.append((total / n if n else 0.0) or 1.0)
    out = np.empty(lengths.shape, dtype=np.float64)
    for j, (w, b, mean) in enumerate(zip(field_weight, field_b, means, strict=True)):
        out[:, j] = w / (1 - b + b * lengths[:, j] / mean)
    return out, means


def weigh(tf: Counts, docs: Ints, norm: Floats, order: Sequence[int], k1: float) -> Floats:
    """The saturated BM25F weight of one term in each of ``docs`` from its per-field counts:
    fields summed in ``order`` (long fields first), then ``t * (k1 + 1) / (k1 + t)``."""
    tilde = np.zeros(len(docs), dtype=np.float64)
    sub = norm[docs]
    for j in order:
        tilde += tf[:, j] * sub[:, j]
    return tilde * (k1 + 1) / (k1 + tilde)
