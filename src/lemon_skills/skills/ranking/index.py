"""The search index over skills: fields, BM25F term weights, and a compact byte form.

Each skill is split into fields (key and name, keywords and tags, description, body
headings, body prose). A term's weight in a skill is BM25F: the field counts are weighted and
length-normalised per field, summed, then saturated once. That weight does not depend on the
query, so it is computed here, once per registry state, and a query only adds numbers up.
Pure: entries in, an immutable ``Index`` out.
"""

from __future__ import annotations

import hashlib
import marshal
import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from lemon_skills.skills.model import Entry
from lemon_skills.skills.ranking import tokens as text

Field = str
FIELDS: tuple[Field, ...] = ("name", "keywords", "description", "headings", "body")
#: Body text past this many characters is not indexed: long references state their topic
#: early, and the cap bounds the build time of huge skills.
BODY_CHARS = 20_000
#: Bumped whenever what the index stores changes, so stale cached indexes are ignored.
FORMAT = 1
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.M)


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """Tunable constants of the scorer (defaults chosen on labelled queries, see benchmarks)."""

    field_weight: Mapping[Field, float] = field(
        default_factory=lambda: {
            "name": 3.0,
            "keywords": 2.5,
            "description": 2.0,
            "headings": 1.0,
            "body": 0.1,
        }
    )
    field_b: Mapping[Field, float] = field(
        default_factory=lambda: {
            "name": 0.3,
            "keywords": 0.3,
            "description": 0.5,
            "headings": 0.6,
            "body": 0.75,
        }
    )
    k1: float = 3.0
    #: How much a skill that has a term only in its body counts towards the term's document
    #: frequency (1 = plain BM25). A body mentions a term in passing; the short fields say
    #: what a skill is about, so a word every body uses but few skills are about stays rare.
    body_df: float = 0.35
    #: Bonus per adjacent query-word pair found adjacent in a short field (times its IDF).
    phrase: float = 0.5
    #: Added when the query is a skill's key or name.
    exact_name: float = 100.0
    #: Weight of a typo fix or compound part relative to a word as typed.
    fuzzy: float = 0.7
    #: The score is multiplied by coverage ** this (IDF share of the query the skill matched).
    coverage_power: float = 0.75
    #: The same for the abstain check (``ranking.evidence``).
    abstain_coverage_power: float = 1.0
    #: Coverage credit of a word found only in the body, relative to one in a short field.
    body_credit: float = 1.0
    #: Answer only if the best skill scores at least this (in units of the rarest term).
    min_score: float = 0.45
    #: With semantic ranking: bonus per unit of cosine similarity above the floor...
    semantic_weight: float = 3.0
    semantic_floor: float = 0.1
    #: ...and the abstain bar for the combined score.
    semantic_min_score: float = 0.8
    #: Results after the first are kept while they score at least this share of the first.
    keep_ratio: float = 0.0

    def fingerprint(self) -> str:
        """A stable digest of every constant (part of the cache key)."""
        return hashlib.sha256(repr(sorted(_as_items(self))).encode()).hexdigest()[:16]


def _as_items(w: Weights) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for name in Weights.__dataclass_fields__:
        value = getattr(w, name)
        out.append((name, sorted(value.items()) if isinstance(value, Mapping) else value))
    return out


DEFAULT_WEIGHTS = Weights()


@dataclass(frozen=True, slots=True)
class Posting:
    """The skills holding one term: skill numbers, saturated weights, short-field flags."""

    docs: Sequence[int]
    weights: Sequence[float]
    strong: bytes  # 1 where the term is in the name, keywords, description or headings


@dataclass(frozen=True, slots=True)
class Index:
    """Term statistics over a fixed set of entries; immutable and shared across queries."""

    entries: tuple[Entry, ...]
    postings: Mapping[str, Posting]
    idf: Mapping[str, float]  # ranks: body-only holders discounted (``Weights.body_df``)
    plain_idf: Mapping[str, float]  # abstains: every holder counts (plain BM25 IDF)
    names: Mapping[str, int]  # key or name as words -> skill number
    lexicon: Mapping[str, str]  # short-field word -> its term (typo and compound lookups)
    weights: Weights
    # Built on the first query that needs a typo fix: most queries never do.
    fuzzy_keys: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def idf_of_unknown(self) -> float:
        """The IDF a word in no skill would have (the rarest possible)."""
        return idf(len(self.entries), 0)


def entry_fields(entry: Entry) -> dict[Field, str]:
    """The text of each field of ``entry``."""
    m = entry.manifest
    body = entry.body[:BODY_CHARS]
    name = " ".join(dict.fromkeys([*text.key_words(entry.key), *text.key_words(entry.name)]))
    extra = [*m.keywords, *m.tags, *([m.category] if m.category else [])]
    return {
        "name": name,
        "keywords": " ".join(extra),
        "description": entry.description,
        "headings": "\n".join(_HEADING.findall(_FENCE.sub("", body))),
        "body": body,
    }


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
    raw = tuple(w for w in text.words(value) if text.is_content(w))
    terms = [text.stem(w) for w in raw]
    counts: Counter[str] = Counter(terms)
    counts.update(bigrams(terms))
    return counts, raw, terms


FieldCounts = list[tuple[Field, Counter[str], int]]


@dataclass(frozen=True, slots=True)
class _Analysed:
    """One skill tokenised: what does not depend on the other skills (never mutated)."""

    fields: tuple[tuple[Field, Counter[str], int], ...]
    short_words: tuple[tuple[str, ...], ...]  # content words of name, keywords, description...
    lexicon: tuple[tuple[str, str], ...]  # (word, term) of the short-field words of 3+ letters


def _analyse_entry(entry: Entry) -> _Analysed:
    fields: list[tuple[Field, Counter[str], int]] = []
    raw: list[tuple[str, ...]] = []
    lexicon: dict[str, str] = {}
    for fname, value in entry_fields(entry).items():
        if fname == "body":
            counts = text.term_counts(value)
            fields.append((fname, counts, counts.total()))
        else:
            counts, words, terms = _short_counts(value)
            fields.append((fname, counts, len(terms)))
            raw.append(words)
            lexicon.update((w, t) for w, t in zip(words, terms, strict=True) if len(w) >= 3)
    return _Analysed(fields=tuple(fields), short_words=tuple(raw), lexicon=tuple(lexicon.items()))


#: Tokenised skills by content stamp, so a rebuild after one edit re-reads one skill: the
#: corpus-wide steps (compounds, lengths, IDF) are cheap next to stemming every body.
_ANALYSED: dict[tuple[object, ...], _Analysed] = {}


def _stamp(entry: Entry) -> tuple[object, ...]:
    """What identifies one version of a skill: the stat signature changes with every edit and
    costs no read; entries built in memory (no file) fall back to their text."""
    if entry.file_sig is not None:
        return (entry.key, entry.source, entry.real_path, entry.file_sig)
    digest = hashlib.sha256(f"{entry.manifest!r}{entry.body}".encode()).hexdigest()
    return (entry.key, entry.source, entry.name, entry.description, digest)


def _analysed(entries: Sequence[Entry]) -> list[_Analysed]:
    memo = _ANALYSED
    stamps = [_stamp(e) for e in entries]
    out = []
    for entry, stamp in zip(entries, stamps, strict=True):
        a = memo.get(stamp)
        if a is None:
            a = memo[stamp] = _analyse_entry(entry)
        out.append(a)
    if len(memo) > 2 * len(entries) + 1_000:
        # Keep the current skills; older versions of edited ones are not asked for again.
        keep = {s: memo[s] for s in stamps if s in memo}
        memo.clear()
        memo.update(keep)
    return out


def _analyse(entries: Sequence[Entry]) -> tuple[list[FieldCounts], dict[str, str]]:
    analysed = _analysed(entries)
    lexicon: dict[str, str] = {}
    per_entry: list[FieldCounts] = []
    short_words: list[tuple[tuple[str, ...], ...]] = []
    for a in analysed:
        # Short-field counts gain compound parts below, so they are copied; bodies are shared.
        *short, body = a.fields
        per_entry.append([*((f, Counter(c), n) for f, c, n in short), body])
        short_words.append(a.short_words)
        lexicon.update(a.lexicon)
    # Compound key words ("firecrawl", "hackernews") also count as their parts.
    for entry, fields in zip(entries, per_entry, strict=True):
        parts = [p for w in text.key_words(entry.key) if (p := decompound(w, lexicon))]
        fields[0][1].update(t for pair in parts for t in pair)
    _split_compounds(per_entry, short_words, lexicon)
    return per_entry, lexicon


def _split_compounds(
    per_entry: list[FieldCounts],
    short_words: Sequence[Sequence[Sequence[str]]],
    lexicon: Mapping[str, str],
) -> None:
    """Let compounds in keywords, descriptions and headings ("website", "codebase") also
    count as their parts, so "site" meets "website". Only a compound that fewer skills state
    than either part is split: a true compound narrows its parts, while an ordinary word
    that merely looks like two ("perform" = "per" + "form") is at least as common."""
    held: Counter[str] = Counter()
    for fields in per_entry:
        held.update({t for _, counts, _ in fields[:-1] for t in counts})
    splits: dict[str, tuple[str, str] | None] = {}
    for fields, raw in zip(per_entry, short_words, strict=True):
        for (_, counts, _), words in zip(fields[1:-1], raw[1:], strict=True):
            for w in words:
                if w not in splits:
                    p = decompound(w, lexicon)
                    rarer = p and held[text.stem(w)] <= min(held[p[0]], held[p[1]])
                    splits[w] = p if rarer else None
                if (pair := splits[w]) is not None:
                    counts.update(pair)


def build_index(entries: Sequence[Entry], *, weights: Weights = DEFAULT_WEIGHTS) -> Index:
    """Tokenise every entry once and precompute each (term, skill) weight."""
    n = len(entries)
    per_entry, lexicon = _analyse(entries)
    avg = dict.fromkeys(FIELDS, 1.0)
    for i, fname in enumerate(FIELDS):
        total = sum(fields[i][2] for fields in per_entry)
        avg[fname] = (total / n if n else 0.0) or 1.0
    k1 = weights.k1
    docs: dict[str, array[int]] = {}
    sat: dict[str, array[float]] = {}
    strong: dict[str, bytearray] = {}
    norms = {f: (weights.field_weight[f], weights.field_b[f], avg[f]) for f in FIELDS}
    for i, fields in enumerate(per_entry):
        *short, (_, body, body_len) = fields
        w, b, mean = norms["body"]
        norm = w / (1 - b + b * body_len / mean)
        tilde = {term: tf * norm for term, tf in body.items()}
        in_short: set[str] = set()
        for fname, counts, length in short:
            w, b, mean = norms[fname]
            norm = w / (1 - b + b * length / mean)
            for term, tf in counts.items():
                tilde[term] = tilde.get(term, 0.0) + tf * norm
            in_short.update(counts)
        for term, t in tilde.items():
            flag = term in in_short
            if term in docs:
                docs[term].append(i)
                sat[term].append(t * (k1 + 1) / (k1 + t))
                strong[term].append(flag)
            else:
                docs[term] = array("i", (i,))
                sat[term] = array("d", (t * (k1 + 1) / (k1 + t),))
                strong[term] = bytearray((flag,))
    postings = {t: Posting(d, sat[t], bytes(strong[t])) for t, d in docs.items()}
    plain = _idf(n, {t: len(d) for t, d in docs.items()})
    ranked = plain
    if weights.body_df != 1.0:
        ranked = _idf(
            n, {t: _df(len(d), strong[t].count(1), weights.body_df) for t, d in docs.items()}
        )
    return Index(
        entries=tuple(entries),
        postings=postings,
        idf=ranked,
        plain_idf=plain,
        names=_names(entries),
        lexicon=lexicon,
        weights=weights,
    )


#: Skills every set is assumed to be drawn from, none holding the term. Without it a term in
#: both of two skills would weigh nothing, and a small set could never clear the abstain bar.
BACKGROUND = 100


def idf(n: int, df: float) -> float:
    """BM25 IDF of a term held by ``df`` of ``n`` skills, smoothed by ``BACKGROUND``."""
    return math.log(1 + (n + BACKGROUND - df + 0.5) / (df + 0.5))


def _df(held: int, in_short: int, body_df: float) -> float:
    """Document frequency of a term held by ``held`` skills, ``in_short`` of them in a short
    field: body-only holders count ``body_df`` each."""
    return in_short + body_df * (held - in_short)


def _idf(n: int, df: Mapping[str, float]) -> dict[str, float]:
    return {t: idf(n, d) for t, d in df.items()}


def _names(entries: Sequence[Entry]) -> dict[str, int]:
    names: dict[str, int] = {}
    for i, entry in enumerate(entries):
        for label in (entry.key, entry.name):
            names.setdefault(" ".join(text.key_words(label)), i)
    return names


# --- byte form (for the on-disk cache) -------------------------------------------------------


def cache_key(entries: Sequence[Entry], weights: Weights = DEFAULT_WEIGHTS) -> str:
    """A digest of everything the index depends on: format, weights and each skill's bytes."""
    h = hashlib.sha256(f"{FORMAT}:{weights.fingerprint()}:{BODY_CHARS}:{BACKGROUND}".encode())
    for e in entries:
        h.update(f"\0{_stamp(e)!r}".encode())
    return h.hexdigest()[:32]


def dumps(index: Index) -> bytes:
    """The index as bytes for ``loads`` (entries are not stored: the caller has them)."""
    raw = {
        t: (_packed("i", p.docs), _packed("d", p.weights), p.strong)
        for t, p in index.postings.items()
    }
    header = (FORMAT, sys.byteorder, array("i").itemsize, len(index.entries))
    return marshal.dumps((header, raw, dict(index.lexicon)))


def _packed(code: str, values: Sequence[int] | Sequence[float]) -> bytes:
    if isinstance(values, array | memoryview):
        return values.tobytes()
    return array(code, values).tobytes()


def loads(data: bytes, entries: Sequence[Entry], *, weights: Weights = DEFAULT_WEIGHTS) -> Index:
    """Rebuild an index from ``dumps`` output for the same ``entries``.

    Raises:
        ValueError: the bytes are not an index of this format, machine or skill count.
    """
    try:
        header, raw, lexicon = marshal.loads(data)  # noqa: S302 - our own cache file
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not a ranking index") from exc
    if tuple(header) != (FORMAT, sys.byteorder, array("i").itemsize, len(entries)):
        raise ValueError("ranking index of another format or skill set")
    postings = _StoredPostings(raw)
    return Index(
        entries=tuple(entries),
        postings=postings,
        idf=_StoredIdf(postings, len(entries), weights.body_df),
        plain_idf=_StoredIdf(postings, len(entries), 1.0),
        names=_names(entries),
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
        """The document frequency of ``term``, body-only holders counting ``body_df``."""
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
