"""The search index: BM25F term statistics over a list of documents, built or updated.

A document's fields are weighted and length-normalised per field, summed, then saturated once
(BM25F). That weight does not depend on the query; it is computed from the stored counts the
first time a query needs a term (``weighing``), so the index itself holds only counts: per
(term, document) row, one count per field, in flat arrays (``postings``). An edit then changes
the rows of the edited documents only (``update_index``), and the result equals a fresh
``build_index`` of the same documents, score for score. Pure: documents in, an immutable
``Index`` out. ``schema`` says what a document and the weights are, ``analysis`` tokenises,
``compounds`` splits compound words, ``codec`` is the byte form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from lemon_skills.search import analysis, tokens
from lemon_skills.search import postings as rows_mod
from lemon_skills.search.analysis import Analysed, Memo, Shorts
from lemon_skills.search.compounds import (
    compounds,
    drop_spent,
    first,
    recompound,
    short_fields,
)
from lemon_skills.search.schema import BUILD_FIELDS, Document, Weights, idf
from lemon_skills.search.store import DocState, Store, doc_state
from lemon_skills.search.weighing import Idf, Posting, Postings


@dataclass(frozen=True, slots=True)
class Index:
    """Term statistics over a fixed list of documents; immutable and shared across queries."""

    keys: tuple[str, ...]
    priority: tuple[int, ...]
    postings: Mapping[str, Posting]
    idf: Mapping[str, float]  # ranks: long-field-only holders discounted (``Weights.body_df``)
    plain_idf: Mapping[str, float]  # abstains: every holder counts (plain BM25 IDF)
    names: Mapping[str, int]  # a name as words -> document number
    lexicon: Mapping[str, str]  # short-field word -> its term (typo and compound lookups)
    weights: Weights
    # Built on the first query that needs a typo fix: most queries never do.
    fuzzy_keys: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    #: What ``update_index`` and ``dumps`` need: the rows and each document's short fields.
    store: Store | None = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.keys)

    def idf_of_unknown(self) -> float:
        """The IDF a word in no document would have (the rarest possible)."""
        return idf(len(self.keys), 0)


def reweigh(index: Index, weights: Weights) -> Index:
    """``index`` ranked with ``weights``, which may differ from its own only outside
    ``BUILD_FIELDS`` (so no rebuild is needed).

    Raises:
        ValueError: ``weights`` changes a constant the index was built with.
    """
    if any(getattr(weights, f) != getattr(index.weights, f) for f in BUILD_FIELDS):
        raise ValueError("these weights need a new index")
    return replace(index, weights=weights)


def stamps(index: Index) -> tuple[Hashable | None, ...]:
    """The ``stamp`` of each document of ``index`` (empty for an index without a store)."""
    docs = index.store.docs if index.store is not None else None
    return () if docs is None else docs.stamps


def labels_of(doc: Document) -> tuple[str, ...]:
    return tuple(" ".join(tokens.key_words(label)) for label in doc.names)


def _long_cols(weights: Weights) -> list[int]:
    return [j for j, f in enumerate(weights.fields) if f in weights.long_fields]


def build_index(docs: Sequence[Document], weights: Weights, *, memo: Memo | None = None) -> Index:
    """Tokenise every document (once per ``stamp`` with a ``memo``) and count each term."""
    ids: dict[str, int] = {}
    builder = rows_mod.Builder(len(weights.fields), ids)
    long_cols = _long_cols(weights)
    shorts: list[Analysed] = []
    # Long fields go into the rows as each document is read, so no document's bag of words
    # outlives its turn: a build's memory is the rows, not every body's word counts.
    for n, a in enumerate(analysis.analysed(docs, weights, memo)):
        for j in long_cols:
            builder.add(n, j, a.fields[j][1])
        shorts.append(analysis.without_long(a, weights))
    labels = tuple(labels_of(d) for d in docs)
    c = compounds(shorts, [first(lab) for lab in labels], weights)
    for n, (a, parts) in enumerate(zip(shorts, c.name_parts, strict=True)):
        for j, counts in short_fields(a, parts, c, weights):
            builder.add(n, j, counts)
    words = Counter(w for a in shorts for w, _ in a.lexicon)
    state = DocState(tuple(d.stamp for d in docs), Shorts(list(shorts), weights), labels, c, words)
    store = Store(builder.rows(), list(ids), ids, _lengths(shorts, len(weights.fields)), state)
    keys = tuple(d.key for d in docs)
    return assemble(
        keys, tuple(d.priority for d in docs), store, names_of(labels), c.lexicon, weights
    )


def _lengths(analysed: Sequence[Analysed], width: int) -> npt.NDArray[np.int32]:
    if not analysed:
        return np.zeros((0, width), dtype=np.int32)
    return np.asarray([[n for _, _, n in a.fields] for a in analysed], dtype=np.int32)


def update_index(old: Index, docs: Sequence[Document], *, merge: bool = True) -> Index:
    """The index of ``docs`` made from ``old``: documents whose ``stamp`` ``old`` has keep
    their rows, the others are tokenised; the result equals ``build_index(docs, ...)``.
    Its rows are an overlay of ``old``'s, merged once the changes outgrow it unless
    ``merge`` is false (then whoever stores it merges them, see ``codec.dump_chunks``).

    Raises:
        ValueError: ``old`` has no store (it was not built by this module).
    """
    if old.store is None:
        raise ValueError("this index cannot be updated")
    weights = old.weights
    store = old.store
    state = doc_state(store)
    where = {s: i for i, s in enumerate(state.stamps) if s is not None}
    renumber = np.full(len(state.stamps), -1, dtype=np.int32)
    fresh: dict[int, Analysed] = {}  # new number -> the document tokenised now
    old_of: dict[int, int] = {}  # new number -> old number, for documents kept as they were
    for n, doc in enumerate(docs):
        i = where.pop(doc.stamp, None) if doc.stamp is not None else None
        if i is None:
            fresh[n] = analysis.analyse_document(doc, weights)
        else:
            renumber[i] = n
            old_of[n] = i
    source = [-1] * len(docs)
    for n, i in old_of.items():
        source[n] = i
    shorts = state.shorts.remap(
        source, {n: analysis.without_long(a, weights) for n, a in fresh.items()}
    )
    old_labels = state.labels
    labels = tuple(old_labels[i] if i >= 0 else labels_of(docs[n]) for n, i in enumerate(source))
    gone = np.flatnonzero(renumber < 0).tolist()
    words = Counter(state.words)
    spent = [w for i in gone for w, _ in state.shorts[i].lexicon]
    words.subtract(spent)
    for a in fresh.values():
        words.update(w for w, _ in a.lexicon)
    drop_spent(words, spent)
    c, redo = recompound(
        state.compounds, state.shorts, shorts, words, labels, fresh, old_of, gone, weights
    )
    ids = dict(store.ids)
    builder = rows_mod.Builder(len(weights.fields), ids)
    long_cols = _long_cols(weights)
    for n in redo:
        # Compounds changed, text did not: long fields are read back from the rows.
        for j in long_cols:
            builder.add(n, j, store.rows.doc_counts(old_of[n], j, store.terms))
        renumber[old_of[n]] = -1
    for n, a in fresh.items():
        for j in long_cols:
            builder.add(n, j, a.fields[j][1])
    for n in sorted({*fresh, *redo}):
        for j, counts in short_fields(shorts[n], c.name_parts[n], c, weights):
            builder.add(n, j, counts)
    added = builder.rows()
    terms = [*store.terms, *list(ids)[len(store.terms) :]]
    rows = rows_mod.overlay(store.rows, renumber, added, merge=merge)
    lengths = np.zeros((len(docs), len(weights.fields)), dtype=np.int32)
    if old_of:
        lengths[np.fromiter(old_of, np.int64)] = store.lengths[
            np.fromiter(old_of.values(), np.int64)
        ]
    for n, a in fresh.items():
        lengths[n] = [k for _, _, k in a.fields]
    new_state = DocState(tuple(d.stamp for d in docs), shorts, labels, c, words)
    new_store = Store(rows, terms, ids, lengths, new_state)
    keys = tuple(d.key for d in docs)
    priority = tuple(d.priority for d in docs)
    # An edit that renames nothing keeps the names (a tuple compare, not a rebuild).
    names = old.names if labels == old_labels else names_of(labels)
    return assemble(keys, priority, new_store, names, c.lexicon, weights)


def assemble(
    keys: tuple[str, ...],
    priority: tuple[int, ...],
    store: Store,
    names: Mapping[str, int],
    lexicon: Mapping[str, str],
    weights: Weights,
) -> Index:
    postings = Postings(store, weights)
    n = len(keys)
    return Index(
        keys=keys,
        priority=priority,
        postings=postings,
        idf=Idf(postings, n, weights.body_df),
        plain_idf=Idf(postings, n, 1.0),
        names=names,
        lexicon=lexicon,
        weights=weights,
        store=store,
    )


def names_of(labels: Sequence[tuple[str, ...]]) -> dict[str, int]:
    """A name (as key words) -> the first document it names."""
    names: dict[str, int] = {}
    for i, own in enumerate(labels):
        for label in own:
            names.setdefault(label, i)
    return names
