"""The search index: documents of named text fields, BM25F term weights, a compact byte form.

A document's fields are weighted and length-normalised per field, summed, then saturated once
(BM25F). That weight does not depend on the query; it is computed from the stored counts the
first time a query needs a term (``postings.weigh``), so the index itself holds only counts:
per (term, document) row, one count per field, in flat arrays (``postings``). An edit then
changes the rows of the edited documents only (``update_index``), and the result equals a
fresh ``build_index`` of the same documents, score for score. Pure: documents in, an immutable
``Index`` out.

Fields play one of three parts, set by ``Weights``: the *name* field (``Weights.name_field``)
also holds the compound parts of the document's first name ("firecrawl" -> "fire", "crawl");
*long* fields (``Weights.long_fields``, e.g. a skill body) are counted as a bag of words and say
what a document mentions; every other field is *short*: it says what the document is about, so
its terms form phrases, feed typo fixes and count fully towards a term's document frequency.
"""

from __future__ import annotations

import bisect
import hashlib
import marshal
import math
import mmap
import struct
import sys
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from lemon_skills.search import postings as rows_mod
from lemon_skills.search import tokens

#: Bumped whenever what the index stores changes, so stale cached indexes are ignored.
FORMAT = 3
#: Documents every corpus is assumed to be drawn from, none holding the term. Without it a term
#: in both of two documents would weigh nothing, and a small corpus could never clear the bar.
BACKGROUND = 100


@dataclass(frozen=True, slots=True)
class Document:
    """One thing to find: a key, its text by field name, and how it may be named outright.

    ``names`` are labels a query may type in full to get this document first (a skill's key
    and name, a tool's name); the first one's words also lend compound parts to the name
    field. ``priority`` breaks ties (higher first). ``stamp``, when given, identifies this
    version of the document, so a build with a memo tokenises it once in its life and
    ``update_index`` keeps its rows as they are.
    """

    key: str
    fields: Mapping[str, str]
    names: tuple[str, ...] = ()
    priority: int = 0
    stamp: Hashable | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """The scorer's constants. Field maps are per corpus; the rest have corpus-neutral defaults.

    ``field_weight`` lists the fields in index order; every field named there is indexed.
    """

    field_weight: Mapping[str, float]
    field_b: Mapping[str, float]
    #: Fields counted as a bag of words (no phrases, no typo lexicon, discounted df).
    long_fields: frozenset[str] = frozenset({"body"})
    #: The field that receives the compound parts of a document's first name.
    name_field: str = "name"
    k1: float = 3.0
    #: How much a document that has a term only in a long field counts towards the term's
    #: document frequency (1 = plain BM25): a body mentions a term in passing, the short
    #: fields say what a document is about, so a word every body uses stays rare.
    body_df: float = 0.35
    #: Bonus per adjacent query-word pair found adjacent in a short field (times its IDF).
    phrase: float = 0.5
    #: Added when the query is one of a document's names.
    exact_name: float = 100.0
    #: Weight of a typo fix or compound part relative to a word as typed.
    fuzzy: float = 0.7
    #: The score is multiplied by coverage ** this (IDF share of the query the document matched).
    coverage_power: float = 0.75
    #: The same for the abstain check (``scoring.evidence``).
    abstain_coverage_power: float = 1.0
    #: Coverage credit of a word found only in a long field, relative to one in a short field.
    body_credit: float = 1.0
    #: Answer only if the best document scores at least this (in units of the rarest term)...
    min_score: float = 0.45
    #: ...and holds at least this many of the query's content words (all, when it has fewer).
    min_words: int = 2
    #: With semantic similarity: bonus per unit of cosine similarity above the floor...
    semantic_weight: float = 3.0
    semantic_floor: float = 0.1
    #: ...and the abstain bar for the combined score.
    semantic_min_score: float = 0.8
    #: Results after the first are kept while they score at least this share of the first.
    keep_ratio: float = 0.0

    @property
    def fields(self) -> tuple[str, ...]:
        """Field names in index order."""
        return tuple(self.field_weight)

    def fingerprint(self, names: Iterable[str] | None = None) -> str:
        """A stable digest of every constant, or of those ``names`` (part of a cache key)."""
        items = []
        for name in Weights.__dataclass_fields__ if names is None else sorted(names):
            value = getattr(self, name)
            if isinstance(value, Mapping):
                value = list(value.items())
            elif isinstance(value, frozenset):
                value = sorted(value)
            items.append((name, value))
        return hashlib.sha256(repr(items).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Posting:
    """The documents holding one term: document numbers (ascending), saturated weights, and
    whether the term is in one of the document's short fields."""

    docs: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float64]
    strong: npt.NDArray[np.bool_]
    # ``docs`` and ``weights`` as Python lists, made on the first per-document lookup
    # (``weight``): a lookup in a list is a fraction of one in an array.
    _lists: list[list[Any]] = field(default_factory=list, compare=False, repr=False)

    def weight(self, doc: int) -> float:
        """The weight of the term in ``doc`` (0 when ``doc`` does not hold it)."""
        if not self._lists:
            self._lists.extend([self.docs.tolist(), self.weights.tolist()])
        docs, weights = self._lists
        i = bisect.bisect_left(docs, doc)  # postings are in document order
        return float(weights[i]) if i < len(docs) and docs[i] == doc else 0.0


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


#: The ``Weights`` fields ``build_index`` reads; the others only change how an index is ranked.
BUILD_FIELDS = frozenset({"field_weight", "field_b", "long_fields", "name_field", "k1", "body_df"})


def reweigh(index: Index, weights: Weights) -> Index:
    """``index`` ranked with ``weights``, which may differ from its own only outside
    ``BUILD_FIELDS`` (so no rebuild is needed).

    Raises:
        ValueError: ``weights`` changes a constant the index was built with.
    """
    if any(getattr(weights, f) != getattr(index.weights, f) for f in BUILD_FIELDS):
        raise ValueError("these weights need a new index")
    return replace(index, weights=weights)


def bigrams(terms: Sequence[str]) -> Iterable[str]:
    """Adjacent term pairs, the phrase keys of the index (``"merg pdf"``)."""
    return (f"{a} {b}" for a, b in zip(terms, terms[1:], strict=False))


def decompound(word: str, lexicon: Mapping[str, str]) -> tuple[str, str] | None:
    """Split a compound like ``firecrawl`` into the terms of two known words."""
    if len(word) < 7 or not word.isalpha():
        return None
    for k in range(3, len(word) - 2):
        head, tail = word[:k], word[k:]
        if head in lexicon and tail in lexicon:
            return lexicon[head], lexicon[tail]
    return None


def _short_counts(value: str) -> tuple[Counter[str], tuple[str, ...], list[str]]:
    raw = tuple(w for w in tokens.words(value) if tokens.is_content(w))
    terms = [tokens.stem(w) for w in raw]
    counts: Counter[str] = Counter(terms)
    counts.update(bigrams(terms))
    return counts, raw, terms


FieldCounts = list[tuple[str, Counter[str], int]]


@dataclass(frozen=True, slots=True)
class Analysed:
    """One document tokenised: what does not depend on the other documents (never mutated)."""

    fields: tuple[tuple[str, Counter[str], int], ...]
    short_words: tuple[tuple[str, ...], ...]  # content words of each short field, in order
    lexicon: tuple[tuple[str, str], ...]  # (word, term) of the short-field words of 3+ letters


def dump_analysed(items: Iterable[tuple[Hashable, Analysed]]) -> bytes:
    """Tokenised documents by stamp as bytes for ``load_analysed`` (stamps must be tuples of
    strings and numbers)."""
    return marshal.dumps((FORMAT, [(stamp, _pack(a)) for stamp, a in items]))


def load_analysed(data: bytes) -> dict[Hashable, Analysed]:
    """The tokenised documents ``dump_analysed`` stored.

    Raises:
        ValueError: the bytes are not tokenised documents of this format.
    """
    try:
        version, rows = marshal.loads(data)  # noqa: S302 - our own cache file
        if version != FORMAT:
            raise ValueError("tokenised documents of another format")
        return {stamp: _unpack(packed) for stamp, packed in rows}
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not tokenised documents") from exc


def _pack(a: Analysed) -> tuple[Any, ...]:
    return ([(f, dict(c), n) for f, c, n in a.fields], a.short_words, a.lexicon)


def _unpack(packed: Any) -> Analysed:
    fields, short_words, lexicon = packed
    return Analysed(
        fields=tuple((f, Counter(c), n) for f, c, n in fields),
        short_words=tuple(short_words),
        lexicon=tuple(lexicon),
    )


def analyse_document(doc: Document, weights: Weights) -> Analysed:
    """Tokenise ``doc``'s fields (a missing field is empty)."""
    fields: list[tuple[str, Counter[str], int]] = []
    raw: list[tuple[str, ...]] = []
    lexicon: dict[str, str] = {}
    for fname in weights.fields:
        value = doc.fields.get(fname, "")
        if fname in weights.long_fields:
            counts = tokens.term_counts(value)
            fields.append((fname, counts, counts.total()))
        else:
            counts, words, terms = _short_counts(value)
            fields.append((fname, counts, len(terms)))
            raw.append(words)
            lexicon.update((w, t) for w, t in zip(words, terms, strict=True) if len(w) >= 3)
    return Analysed(fields=tuple(fields), short_words=tuple(raw), lexicon=tuple(lexicon.items()))


def _without_long(a: Analysed, weights: Weights) -> Analysed:
    """``a`` keeping long fields' lengths only: their counts live in the rows."""
    fields = tuple(
        (f, Counter(), n) if f in weights.long_fields else (f, c, n) for f, c, n in a.fields
    )
    return Analysed(fields=fields, short_words=a.short_words, lexicon=a.lexicon)


Memo = MutableMapping[Hashable, Analysed]


def _analysed(docs: Sequence[Document], weights: Weights, memo: Memo | None) -> Iterator[Analysed]:
    if memo is None:
        yield from (analyse_document(d, weights) for d in docs)
        return
    for doc in docs:
        a = memo.get(doc.stamp) if doc.stamp is not None else None
        if a is None:
            a = analyse_document(doc, weights)
            if doc.stamp is not None:
                memo[doc.stamp] = a
        yield a
    if len(memo) > 2 * len(docs) + 1_000:
        # Keep the current documents; older versions of edited ones are not asked for again.
        keep = {d.stamp: memo[d.stamp] for d in docs if d.stamp is not None and d.stamp in memo}
        memo.clear()
        memo.update(keep)


# --- compounds: the one corpus-wide step of tokenising -----------------------------------------


Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Compounds:
    """Which words count as their parts, a function of the corpus's lexicon and of how many
    documents hold each term in a short field (``held``)."""

    lexicon: dict[str, str]
    held: Counter[str]
    #: Per document: the parts of its first name's compound words (added to the name field).
    name_parts: list[tuple[Pair, ...]]
    #: Words of short fields other than the name -> the parts they count as, or None.
    splits: dict[str, Pair | None]
    #: The words among those that are two lexicon words glued (whether split or not).
    candidates: dict[str, Pair]


def _merged_lexicon(shorts: Sequence[Analysed]) -> dict[str, str]:
    lexicon: dict[str, str] = {}
    for a in shorts:
        lexicon.update(a.lexicon)
    return lexicon


def _name_parts(first: Sequence[str], lexicon: Mapping[str, str]) -> tuple[Pair, ...]:
    return tuple(p for w in first if (p := decompound(w, lexicon)))


def _short_cols(weights: Weights) -> tuple[list[int], list[int]]:
    """Indexes of the short fields, and of those among them a compound is split in (all but
    the name), as positions in ``Analysed.short_words``."""
    short = [i for i, f in enumerate(weights.fields) if f not in weights.long_fields]
    splittable = [n for n, i in enumerate(short) if weights.fields[i] != weights.name_field]
    return short, splittable


def _held_terms(a: Analysed, parts: Sequence[Pair], weights: Weights) -> set[str]:
    """The terms ``a`` holds in a short field once its name's compound parts are added."""
    held = {t for f, c, _ in a.fields if f not in weights.long_fields for t in c}
    if weights.name_field in weights.field_weight:
        held.update(t for pair in parts for t in pair)
    return held


def _decide(
    word: str, lexicon: Mapping[str, str], held: Counter[str]
) -> tuple[Pair | None, Pair | None]:
    """A word's parts, and whether it is split into them: only a compound that fewer
    documents state than either part is, as a true compound narrows its parts, while an
    ordinary word that merely looks like two ("perform" = "per" + "form") is at least as
    common."""
    p = decompound(word, lexicon)
    if p is not None and held[tokens.stem(word)] <= min(held[p[0]], held[p[1]]):
        return p, p
    return p, None


def _decide_new(
    shorts: Iterable[Analysed], c: Compounds, lexicon: Mapping[str, str], weights: Weights
) -> None:
    """Add the decisions for the splittable words of ``shorts`` not decided yet."""
    _, splittable = _short_cols(weights)
    for a in shorts:
        for n in splittable:
            for w in a.short_words[n]:
                if w not in c.splits:
                    p, c.splits[w] = _decide(w, lexicon, c.held)
                    if p is not None:
                        c.candidates[w] = p


def compounds(
    shorts: Sequence[Analysed], firsts: Sequence[Sequence[str]], weights: Weights
) -> Compounds:
    """The compound decisions of a whole corpus (``firsts``: each document's first name as
    words)."""
    lexicon = _merged_lexicon(shorts)
    name_parts = [_name_parts(first, lexicon) for first in firsts]
    held: Counter[str] = Counter()
    for a, parts in zip(shorts, name_parts, strict=True):
        held.update(_held_terms(a, parts, weights))
    c = Compounds(lexicon, held, name_parts, {}, {})
    _decide_new(shorts, c, lexicon, weights)
    return c


def _added(
    a: Analysed, parts: Sequence[Pair], c: Compounds, weights: Weights
) -> dict[int, Counter[str]]:
    """The compound parts a document's short fields count besides their words, by field."""
    out: dict[int, Counter[str]] = {}
    short, splittable = _short_cols(weights)
    if weights.name_field in weights.field_weight and parts:
        at = weights.fields.index(weights.name_field)
        out.setdefault(at, Counter()).update(t for p in parts for t in p)
    for n in splittable:
        for w in a.short_words[n]:
            if (pair := c.splits.get(w)) is not None:
                out.setdefault(short[n], Counter()).update(pair)
    return out


def _short_fields(
    a: Analysed, parts: Sequence[Pair], c: Compounds, weights: Weights
) -> list[tuple[int, Mapping[str, int]]]:
    """A document's short fields' counts (by field index) with its compounds' parts added."""
    added = _added(a, parts, c, weights)
    out: list[tuple[int, Mapping[str, int]]] = []
    for j, (f, counts, _) in enumerate(a.fields):
        if f in weights.long_fields:
            continue
        extra = added.get(j)
        if extra:
            merged = Counter(counts)
            merged.update(extra)
            out.append((j, merged))
        else:
            out.append((j, counts))
    return out


# --- building and updating ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Store:
    """An index's rows and what an update needs to know of each document."""

    rows: rows_mod.Rows
    terms: list[str]  # term id -> term
    ids: dict[str, int]  # term -> term id
    lengths: npt.NDArray[np.int32]  # documents x fields
    docs: _DocState | _StoredState


class _Shorts:
    """Each document's short fields tokenised (``Analysed`` with long fields' counts dropped),
    kept in byte form until one is read: an update reads those of the documents it
    replaces, and writing the index back copies the bytes of the others."""

    __slots__ = ("_items", "_weights")

    def __init__(self, items: list[Analysed | bytes | memoryview], weights: Weights) -> None:
        self._items = items
        self._weights = weights

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> Analysed:
        item = self._items[i]
        if isinstance(item, Analysed):
            return item
        words = marshal.loads(item)  # noqa: S302 - our own cache file
        decoded = self._items[i] = _from_words(words, self._weights)
        return decoded

    def raw(self, i: int) -> Analysed | bytes | memoryview:
        """Document ``i`` as stored, decoded or not."""
        return self._items[i]

    def blob(self, i: int) -> bytes | memoryview:
        """Document ``i`` in byte form."""
        item = self._items[i]
        return marshal.dumps(item.short_words) if isinstance(item, Analysed) else item

    def all(self) -> list[Analysed]:
        """Every document, decoded."""
        return [self[i] for i in range(len(self._items))]


def _from_words(short_words: Sequence[Sequence[str]], weights: Weights) -> Analysed:
    """A document's short fields tokenised again from their content words (what is stored:
    the counts, phrases and lexicon follow from them as in ``analyse_document``)."""
    fields: list[tuple[str, Counter[str], int]] = []
    lexicon: dict[str, str] = {}
    it = iter(short_words)
    for fname in weights.fields:
        if fname in weights.long_fields:
            fields.append((fname, Counter(), 0))
            continue
        words = tuple(next(it))
        terms = [tokens.stem(w) for w in words]
        counts: Counter[str] = Counter(terms)
        counts.update(bigrams(terms))
        fields.append((fname, counts, len(terms)))
        lexicon.update((w, t) for w, t in zip(words, terms, strict=True) if len(w) >= 3)
    return Analysed(
        fields=tuple(fields),
        short_words=tuple(tuple(w) for w in short_words),
        lexicon=tuple(lexicon.items()),
    )


@dataclass(frozen=True, slots=True)
class _DocState:
    stamps: tuple[Hashable | None, ...]
    shorts: _Shorts
    labels: tuple[tuple[str, ...], ...]  # each document's names as key words
    compounds: Compounds
    #: Short-field word -> how many documents have it in their lexicon.
    words: Counter[str]


class _StoredState:
    """A ``_DocState`` still in its byte form: decoded only when an update needs it."""

    __slots__ = ("_data", "_decoded", "_lexicon", "_shorts", "stamps")

    def __init__(
        self,
        data: bytes | memoryview,
        shorts: _Shorts,
        stamps: tuple[Hashable | None, ...],
        lexicon: dict[str, str],
    ) -> None:
        self._data = data
        self._shorts = shorts
        self._lexicon = lexicon
        self._decoded: _DocState | None = None
        self.stamps = stamps

    def decode(self) -> _DocState:
        if self._decoded is None:
            self._decoded = _decode_state(self._data, self._shorts, self.stamps, self._lexicon)
        return self._decoded


def stamps(index: Index) -> tuple[Hashable | None, ...]:
    """The ``stamp`` of each document of ``index`` (empty for an index without a store)."""
    if index.store is None:
        return ()
    docs = index.store.docs
    return docs.stamps


def _state(store: Store) -> _DocState:
    docs = store.docs
    return docs if isinstance(docs, _DocState) else docs.decode()


def _labels(doc: Document) -> tuple[str, ...]:
    return tuple(" ".join(tokens.key_words(label)) for label in doc.names)


def _first(labels: tuple[str, ...]) -> list[str]:
    return labels[0].split() if labels else []


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
    for n, a in enumerate(_analysed(docs, weights, memo)):
        for j in long_cols:
            builder.add(n, j, a.fields[j][1])
        shorts.append(_without_long(a, weights))
    labels = tuple(_labels(d) for d in docs)
    c = compounds(shorts, [_first(lab) for lab in labels], weights)
    for n, (a, parts) in enumerate(zip(shorts, c.name_parts, strict=True)):
        for j, counts in _short_fields(a, parts, c, weights):
            builder.add(n, j, counts)
    words = Counter(w for a in shorts for w, _ in a.lexicon)
    state = _DocState(
        tuple(d.stamp for d in docs), _Shorts(list(shorts), weights), labels, c, words
    )
    store = Store(builder.rows(), list(ids), ids, _lengths(shorts, len(weights.fields)), state)
    keys = tuple(d.key for d in docs)
    return _index(keys, tuple(d.priority for d in docs), store, _names(labels), c.lexicon, weights)


def _lengths(analysed: Sequence[Analysed], width: int) -> npt.NDArray[np.int32]:
    if not analysed:
        return np.zeros((0, width), dtype=np.int32)
    return np.asarray([[n for _, _, n in a.fields] for a in analysed], dtype=np.int32)


def update_index(old: Index, docs: Sequence[Document]) -> Index:
    """The index of ``docs`` made from ``old``: documents whose ``stamp`` ``old`` has keep
    their rows, the others are tokenised; the result equals ``build_index(docs, ...)``.

    Raises:
        ValueError: ``old`` has no store (it was not built by this module).
    """
    if old.store is None:
        raise ValueError("this index cannot be updated")
    weights = old.weights
    store = old.store
    state = _state(store)
    where = {s: i for i, s in enumerate(state.stamps) if s is not None}
    renumber = np.full(len(state.stamps), -1, dtype=np.int32)
    items: list[Analysed | bytes | memoryview] = []
    fresh: dict[int, Analysed] = {}  # new number -> the document tokenised now
    old_of: dict[int, int] = {}  # new number -> old number, for documents kept as they were
    for n, doc in enumerate(docs):
        i = where.pop(doc.stamp, None) if doc.stamp is not None else None
        if i is None:
            fresh[n] = a = analyse_document(doc, weights)
            items.append(_without_long(a, weights))
        else:
            renumber[i] = n
            old_of[n] = i
            items.append(state.shorts.raw(i))
    shorts = _Shorts(items, weights)
    labels = tuple(
        _labels(d) if n in fresh else state.labels[old_of[n]] for n, d in enumerate(docs)
    )
    gone = np.flatnonzero(renumber < 0).tolist()
    words = Counter(state.words)
    for i in gone:
        words.subtract(w for w, _ in state.shorts[i].lexicon)
    for a in fresh.values():
        words.update(w for w, _ in a.lexicon)
    words = +words
    c, redo = _recompound(state, shorts, words, labels, fresh, old_of, gone, weights)
    ids = dict(store.ids)
    builder = rows_mod.Builder(len(weights.fields), ids)
    long_cols = _long_cols(weights)
    for n in redo:
        # Compounds changed, text did not: long fields are read back from the rows.
        for j in long_cols:
            builder.add(n, j, rows_mod.doc_counts(store.rows, old_of[n], j, store.terms))
        renumber[old_of[n]] = -1
    for n, a in fresh.items():
        for j in long_cols:
            builder.add(n, j, a.fields[j][1])
    for n in sorted({*fresh, *redo}):
        for j, counts in _short_fields(shorts[n], c.name_parts[n], c, weights):
            builder.add(n, j, counts)
    added = builder.rows()
    terms = [*store.terms, *list(ids)[len(store.terms) :]]
    rows = rows_mod.patch(store.rows, renumber, added)
    lengths = np.zeros((len(docs), len(weights.fields)), dtype=np.int32)
    if old_of:
        lengths[np.fromiter(old_of, np.int64)] = store.lengths[
            np.fromiter(old_of.values(), np.int64)
        ]
    for n, a in fresh.items():
        lengths[n] = [k for _, _, k in a.fields]
    new_state = _DocState(tuple(d.stamp for d in docs), shorts, labels, c, words)
    new_store = Store(rows, terms, ids, lengths, new_state)
    keys = tuple(d.key for d in docs)
    priority = tuple(d.priority for d in docs)
    return _index(keys, priority, new_store, _names(labels), c.lexicon, weights)


def _recompound(
    state: _DocState,
    shorts: _Shorts,
    words: Counter[str],
    labels: Sequence[tuple[str, ...]],
    fresh: Mapping[int, Analysed],
    old_of: Mapping[int, int],
    gone: Sequence[int],
    weights: Weights,
) -> tuple[Compounds, list[int]]:
    """The new corpus's compound decisions, and the kept documents (new numbers) whose
    compound parts changed with them. Worked out from the changed documents alone while the
    lexicon keeps its words and no split decision flips; otherwise over the whole corpus."""
    old = state.compounds
    if words.keys() == old.lexicon.keys():
        fast = _recompound_changed(state, shorts, labels, fresh, old_of, gone, weights)
        if fast is not None:
            return fast, []
    every = shorts.all()
    c = compounds(every, [_first(lab) for lab in labels], weights)
    redo = [
        n
        for n, i in old_of.items()
        if _added(state.shorts[i], old.name_parts[i], old, weights)
        != _added(every[n], c.name_parts[n], c, weights)
    ]
    return c, sorted(redo)


def _recompound_changed(
    state: _DocState,
    shorts: _Shorts,
    labels: Sequence[tuple[str, ...]],
    fresh: Mapping[int, Analysed],
    old_of: Mapping[int, int],
    gone: Sequence[int],
    weights: Weights,
) -> Compounds | None:
    """Compound decisions after an edit that left the lexicon as it was, or None when one
    of the old decisions flips (a kept document's counts would change)."""
    old = state.compounds
    lexicon = old.lexicon  # same words, and a word's term is its stem
    held = Counter(old.held)
    touched: set[str] = set()
    for i in gone:
        terms = _held_terms(state.shorts[i], old.name_parts[i], weights)
        held.subtract(terms)
        touched |= terms
    # The lexicon is the same, so a kept document's name parts are too.
    name_parts: list[tuple[Pair, ...]] = []
    for n in range(len(shorts)):
        if n in fresh:
            parts = _name_parts(_first(labels[n]), lexicon)
            terms = _held_terms(fresh[n], parts, weights)
            held.update(terms)
            touched |= terms
        else:
            parts = old.name_parts[old_of[n]]
        name_parts.append(parts)
    changed = {t for t in touched if held[t] != old.held[t]}
    for w, p in old.candidates.items():
        if (p[0] in changed or p[1] in changed or tokens.stem(w) in changed) and _decide(
            w, lexicon, held
        )[1] != old.splits.get(w):
            return None
    c = Compounds(lexicon, +held, name_parts, dict(old.splits), dict(old.candidates))
    _decide_new(fresh.values(), c, lexicon, weights)
    return c


def _index(
    keys: tuple[str, ...],
    priority: tuple[int, ...],
    store: Store,
    names: dict[str, int],
    lexicon: Mapping[str, str],
    weights: Weights,
) -> Index:
    postings = _Postings(store, weights)
    n = len(keys)
    return Index(
        keys=keys,
        priority=priority,
        postings=postings,
        idf=_Idf(postings, n, weights.body_df),
        plain_idf=_Idf(postings, n, 1.0),
        names=names,
        lexicon=lexicon,
        weights=weights,
        store=store,
    )


def idf(n: int, df: float) -> float:
    """BM25 IDF of a term held by ``df`` of ``n`` documents, smoothed by ``BACKGROUND``."""
    return math.log(1 + (n + BACKGROUND - df + 0.5) / (df + 0.5))


def _df(held: int, in_short: int, body_df: float) -> float:
    """Document frequency of a term held by ``held`` documents, ``in_short`` of them in a short
    field: long-field-only holders count ``body_df`` each."""
    return in_short + body_df * (held - in_short)


def _names(labels: Sequence[tuple[str, ...]]) -> dict[str, int]:
    """A name (as key words) -> the first document it names."""
    names: dict[str, int] = {}
    for i, own in enumerate(labels):
        for label in own:
            names.setdefault(label, i)
    return names


class _Postings(Mapping[str, Posting]):
    """Each term's posting, weighed from the stored counts on first use: a query touches a
    few dozen terms of tens of thousands."""

    def __init__(self, store: Store, weights: Weights) -> None:
        self._store = store
        names = weights.fields
        self._norm, _ = rows_mod.norms(
            store.lengths,
            [weights.field_weight[f] for f in names],
            [weights.field_b[f] for f in names],
        )
        # Long fields first: the sums then come out bit for bit as they always have.
        self._order = sorted(range(len(names)), key=lambda j: names[j] not in weights.long_fields)
        self._short = np.asarray([f not in weights.long_fields for f in names], dtype=np.bool_)
        self._k1 = weights.k1
        self._done: dict[str, Posting] = {}

    def _span(self, term: str) -> tuple[int, int]:
        tid = self._store.ids.get(term)
        return (0, 0) if tid is None else self._store.rows.span(tid)

    def __getitem__(self, term: str) -> Posting:
        p = self._done.get(term)
        if p is None:
            lo, hi = self._span(term)
            if lo == hi:
                raise KeyError(term)
            rows = self._store.rows
            docs = rows.doc[lo:hi]
            tf = rows.tf[lo:hi]
            weights = rows_mod.weigh(tf, docs, self._norm, self._order, self._k1)
            strong: npt.NDArray[np.bool_] = np.asarray((tf[:, self._short] > 0).any(axis=1))
            p = self._done[term] = Posting(docs, weights, strong)
        return p

    def __contains__(self, term: object) -> bool:
        if not isinstance(term, str):
            return False
        lo, hi = self._span(term)
        return hi > lo

    def __iter__(self) -> Iterator[str]:
        terms = self._store.terms
        return (terms[t] for t in np.unique(self._store.rows.term).tolist())

    def __len__(self) -> int:
        return len(np.unique(self._store.rows.term))

    def df(self, term: str, body_df: float) -> float:
        """The document frequency of ``term``, long-field-only holders counting ``body_df``."""
        p = self[term]
        return _df(len(p.docs), int(np.count_nonzero(p.strong)), body_df)


class _Idf(Mapping[str, float]):
    """IDF computed on first use from the postings."""

    def __init__(self, postings: _Postings, n: int, body_df: float) -> None:
        self._postings = postings
        self._n = n
        self._body_df = body_df
        self._done: dict[str, float] = {}

    def __getitem__(self, term: str) -> float:
        v = self._done.get(term)
        if v is None:
            v = self._done[term] = idf(self._n, self._postings.df(term, self._body_df))
        return v

    def __contains__(self, term: object) -> bool:
        return term in self._postings

    def __iter__(self) -> Iterator[str]:
        return iter(self._postings)

    def __len__(self) -> int:
        return len(self._postings)


# --- byte form (for an on-disk cache) --------------------------------------------------------

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
    state = _state(store)
    docs = [state.shorts.blob(i) for i in range(len(state.shorts))]
    ends = np.cumsum([len(b) for b in docs], dtype=np.int64)
    blobs: list[list[bytes | memoryview]] = [
        [meta],
        [_encode_state(state)],
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
    shorts = _Shorts([text[a:b] for a, b in zip([0, *ends], ends, strict=False)], weights)
    state = _StoredState(blobs[1], shorts, tuple(stamps), lexicon)
    ids = {t: i for i, t in enumerate(terms)}
    store = Store(rows, list(terms), ids, lengths, state)
    return _index(tuple(keys), tuple(priority), store, names, lexicon, weights)


def _encode_state(state: _DocState) -> bytes:
    c = state.compounds
    return marshal.dumps(
        (
            FORMAT,
            state.labels,
            dict(c.held),
            c.name_parts,
            c.splits,
            c.candidates,
            dict(state.words),
        )
    )


def _decode_state(
    data: bytes | memoryview,
    shorts: _Shorts,
    stamps: tuple[Hashable | None, ...],
    lexicon: dict[str, str],
) -> _DocState:
    fmt, labels, held, name_parts, splits, candidates, words = marshal.loads(data)  # noqa: S302
    if fmt != FORMAT:
        raise ValueError("search index of another format")
    return _DocState(
        stamps,
        shorts,
        tuple(tuple(x) for x in labels),
        Compounds(lexicon, Counter(held), list(name_parts), splits, candidates),
        Counter(words),
    )
