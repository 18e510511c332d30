"""The search index: documents of named text fields, BM25F term weights, a compact byte form.

A document's fields are weighted and length-normalised per field, summed, then saturated once
(BM25F). That weight does not depend on the query, so it is computed here, once per corpus
state, and a query only adds numbers up. Pure: documents in, an immutable ``Index`` out.

Fields play one of three parts, set by ``Weights``: the *name* field (``Weights.name_field``)
also holds the compound parts of the document's first name ("firecrawl" -> "fire", "crawl");
*long* fields (``Weights.long_fields``, e.g. a skill body) are counted as a bag of words and say
what a document mentions; every other field is *short*: it says what the document is about, so
its terms form phrases, feed typo fixes and count fully towards a term's document frequency.
"""

from __future__ import annotations

import hashlib
import marshal
import math
import sys
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace

from lemon_skills.search import tokens

#: Bumped whenever what the index stores changes, so stale cached indexes are ignored.
FORMAT = 2
#: Documents every corpus is assumed to be drawn from, none holding the term. Without it a term
#: in both of two documents would weigh nothing, and a small corpus could never clear the bar.
BACKGROUND = 100


@dataclass(frozen=True, slots=True)
class Document:
    """One thing to find: a key, its text by field name, and how it may be named outright.

    ``names`` are labels a query may type in full to get this document first (a skill's key
    and name, a tool's name); the first one's words also lend compound parts to the name
    field. ``priority`` breaks ties (higher first). ``stamp``, when given, identifies this
    version of the document, so a build with a memo tokenises it once in its life.
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

    def fingerprint(self) -> str:
        """A stable digest of every constant (part of a cache key)."""
        items = []
        for name in Weights.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, Mapping):
                value = list(value.items())
            elif isinstance(value, frozenset):
                value = sorted(value)
            items.append((name, value))
        return hashlib.sha256(repr(items).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Posting:
    """The documents holding one term: document numbers, saturated weights, short-field flags."""

    docs: Sequence[int]
    weights: Sequence[float]
    strong: bytes  # 1 where the term is in a short field


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
    strings and numbers), so a new process can rebuild an index re-reading only what changed."""
    rows = [
        (stamp, [(f, dict(c), n) for f, c, n in a.fields], a.short_words, a.lexicon)
        for stamp, a in items
    ]
    return marshal.dumps((FORMAT, rows))


def load_analysed(data: bytes) -> dict[Hashable, Analysed]:
    """The tokenised documents ``dump_analysed`` stored.

    Raises:
        ValueError: the bytes are not tokenised documents of this format.
    """
    try:
        version, rows = marshal.loads(data)  # noqa: S302 - our own cache file
        if version != FORMAT:
            raise ValueError("tokenised documents of another format")
        return {
            stamp: Analysed(
                fields=tuple((f, Counter(c), n) for f, c, n in fields),
                short_words=short_words,
                lexicon=lexicon,
            )
            for stamp, fields, short_words, lexicon in rows
        }
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not tokenised documents") from exc


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


Memo = MutableMapping[Hashable, Analysed]


def _analysed(docs: Sequence[Document], weights: Weights, memo: Memo | None) -> list[Analysed]:
    if memo is None:
        return [analyse_document(d, weights) for d in docs]
    out = []
    for doc in docs:
        a = memo.get(doc.stamp) if doc.stamp is not None else None
        if a is None:
            a = analyse_document(doc, weights)
            if doc.stamp is not None:
                memo[doc.stamp] = a
        out.append(a)
    if len(memo) > 2 * len(docs) + 1_000:
        # Keep the current documents; older versions of edited ones are not asked for again.
        keep = {d.stamp: memo[d.stamp] for d in docs if d.stamp is not None and d.stamp in memo}
        memo.clear()
        memo.update(keep)
    return out


def _analyse(
    docs: Sequence[Document], weights: Weights, memo: Memo | None
) -> tuple[list[FieldCounts], dict[str, str]]:
    analysed = _analysed(docs, weights, memo)
    lexicon: dict[str, str] = {}
    per_doc: list[FieldCounts] = []
    short_words: list[tuple[tuple[str, ...], ...]] = []
    for a in analysed:
        # Short-field counts gain compound parts below, so they are copied; long ones are shared.
        per_doc.append(
            [(f, c if f in weights.long_fields else Counter(c), n) for f, c, n in a.fields]
        )
        short_words.append(a.short_words)
        lexicon.update(a.lexicon)
    # Compound first names ("firecrawl", "hackernews") also count as their parts.
    if weights.name_field in weights.field_weight:
        at = weights.fields.index(weights.name_field)
        for doc, fields in zip(docs, per_doc, strict=True):
            first = tokens.key_words(doc.names[0]) if doc.names else []
            parts = [p for w in first if (p := decompound(w, lexicon))]
            fields[at][1].update(t for pair in parts for t in pair)
    _split_compounds(per_doc, short_words, lexicon, weights)
    return per_doc, lexicon


def _split_compounds(
    per_doc: list[FieldCounts],
    short_words: Sequence[Sequence[Sequence[str]]],
    lexicon: Mapping[str, str],
    weights: Weights,
) -> None:
    """Let compounds in short fields other than the name ("website", "codebase") also count
    as their parts, so "site" meets "website". Only a compound that fewer documents state
    than either part is split: a true compound narrows its parts, while an ordinary word
    that merely looks like two ("perform" = "per" + "form") is at least as common."""
    short = [i for i, f in enumerate(weights.fields) if f not in weights.long_fields]
    splittable = [(n, i) for n, i in enumerate(short) if weights.fields[i] != weights.name_field]
    held: Counter[str] = Counter()
    for fields in per_doc:
        held.update({t for i in short for t in fields[i][1]})
    splits: dict[str, tuple[str, str] | None] = {}
    for fields, raw in zip(per_doc, short_words, strict=True):
        for n, i in splittable:
            counts = fields[i][1]
            for w in raw[n]:
                if w not in splits:
                    p = decompound(w, lexicon)
                    rarer = p and held[tokens.stem(w)] <= min(held[p[0]], held[p[1]])
                    splits[w] = p if rarer else None
                if (pair := splits[w]) is not None:
                    counts.update(pair)


def build_index(docs: Sequence[Document], weights: Weights, *, memo: Memo | None = None) -> Index:
    """Tokenise every document (once per ``stamp`` with a ``memo``) and weigh each term."""
    n = len(docs)
    per_doc, lexicon = _analyse(docs, weights, memo)
    names = weights.fields
    avg = dict.fromkeys(names, 1.0)
    for i, fname in enumerate(names):
        total = sum(fields[i][2] for fields in per_doc)
        avg[fname] = (total / n if n else 0.0) or 1.0
    k1 = weights.k1
    postings: dict[str, tuple[array[int], array[float], bytearray]] = {}
    norms = [(weights.field_weight[f], weights.field_b[f], avg[f]) for f in names]
    # Long fields first: the sums then come out bit for bit as they always have.
    order = sorted(range(len(names)), key=lambda j: names[j] not in weights.long_fields)
    for i, fields in enumerate(per_doc):
        tilde: dict[str, float] = {}
        in_short: set[str] = set()
        for j in order:
            _, counts, length = fields[j]
            w, b, mean = norms[j]
            is_long = names[j] in weights.long_fields
            norm = w / (1 - b + b * length / mean)
            for term, tf in counts.items():
                tilde[term] = tilde.get(term, 0.0) + tf * norm
            if not is_long:
                in_short.update(counts)
        for term, t in tilde.items():
            p = postings.get(term)
            if p is None:
                p = postings[term] = (array("i"), array("d"), bytearray())
            p[0].append(i)
            p[1].append(t * (k1 + 1) / (k1 + t))
            p[2].append(term in in_short)
    out = {t: Posting(d, w, bytes(s)) for t, (d, w, s) in postings.items()}
    plain = {t: idf(n, len(p.docs)) for t, p in out.items()}
    ranked = plain
    if weights.body_df != 1.0:
        ranked = {
            t: idf(n, _df(len(p.docs), p.strong.count(1), weights.body_df)) for t, p in out.items()
        }
    return Index(
        keys=tuple(d.key for d in docs),
        priority=tuple(d.priority for d in docs),
        postings=out,
        idf=ranked,
        plain_idf=plain,
        names=_names(docs),
        lexicon=lexicon,
        weights=weights,
    )


def idf(n: int, df: float) -> float:
    """BM25 IDF of a term held by ``df`` of ``n`` documents, smoothed by ``BACKGROUND``."""
    return math.log(1 + (n + BACKGROUND - df + 0.5) / (df + 0.5))


def _df(held: int, in_short: int, body_df: float) -> float:
    """Document frequency of a term held by ``held`` documents, ``in_short`` of them in a short
    field: long-field-only holders count ``body_df`` each."""
    return in_short + body_df * (held - in_short)


def _names(docs: Sequence[Document]) -> dict[str, int]:
    names: dict[str, int] = {}
    for i, doc in enumerate(docs):
        for label in doc.names:
            names.setdefault(" ".join(tokens.key_words(label)), i)
    return names


# --- byte form (for an on-disk cache) --------------------------------------------------------


def dumps(index: Index) -> bytes:
    """The index as bytes for ``loads``: self-contained except for the weights."""
    raw = {
        t: (_packed("i", p.docs), _packed("d", p.weights), p.strong)
        for t, p in index.postings.items()
    }
    header = (FORMAT, sys.byteorder, array("i").itemsize, len(index.keys))
    meta = (index.keys, index.priority, dict(index.names))
    return marshal.dumps((header, raw, dict(index.lexicon), meta))


def _packed(code: str, values: Sequence[int] | Sequence[float]) -> bytes:
    if isinstance(values, array | memoryview):
        return values.tobytes()
    return array(code, values).tobytes()


def loads(data: bytes, weights: Weights) -> Index:
    """Rebuild an index from ``dumps`` output; ``weights`` must be those it was built with.

    Raises:
        ValueError: the bytes are not an index of this format or machine.
    """
    try:
        header, raw, lexicon, (keys, priority, names) = marshal.loads(data)  # noqa: S302
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not a search index") from exc
    if tuple(header) != (FORMAT, sys.byteorder, array("i").itemsize, len(keys)):
        raise ValueError("search index of another format")
    postings = _StoredPostings(raw)
    n = len(keys)
    return Index(
        keys=tuple(keys),
        priority=tuple(priority),
        postings=postings,
        idf=_StoredIdf(postings, n, weights.body_df),
        plain_idf=_StoredIdf(postings, n, 1.0),
        names=names,
        lexicon=lexicon,
        weights=weights,
    )


_Raw = dict[str, tuple[bytes, bytes, bytes]]


class _StoredPostings(Mapping[str, Posting]):
    """Postings decoded from the byte form on first use: a query touches a few dozen terms."""

    def __init__(self, raw: _Raw) -> None:
        self._raw = raw
        self._done: dict[str, Posting] = {}

    def __getitem__(self, term: str) -> Posting:
        p = self._done.get(term)
        if p is None:
            d, w, s = self._raw[term]
            p = self._done[term] = Posting(memoryview(d).cast("i"), memoryview(w).cast("d"), s)
        return p

    def __contains__(self, term: object) -> bool:
        return term in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def df(self, term: str, body_df: float) -> float:
        """The document frequency of ``term``, long-field-only holders counting ``body_df``."""
        flags = self._raw[term][2]
        return _df(len(flags), flags.count(1), body_df)


class _StoredIdf(Mapping[str, float]):
    """IDF computed on first use from the stored postings."""

    def __init__(self, postings: _StoredPostings, n: int, body_df: float) -> None:
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
