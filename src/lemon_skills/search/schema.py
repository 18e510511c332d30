"""What an index is made of and how it weighs: documents of named text fields, the scorer's
constants (``Weights``) and the IDF every index shares.

Fields play one of three parts, set by ``Weights``: the *name* field (``Weights.name_field``)
also holds the compound parts of the document's first name ("firecrawl" -> "fire", "crawl");
*long* fields (``Weights.long_fields``, e.g. a skill body) are counted as a bag of words and say
what a document mentions; every other field is *short*: it says what the document is about, so
its terms form phrases, feed typo fixes and count fully towards a term's document frequency.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

#: Bumped whenever what the index stores changes, so stale cached indexes are ignored.
FORMAT = 4
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
    semantic_min_score: float = 0.7
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


#: The ``Weights`` fields ``build_index`` reads; the others only change how an index is ranked.
BUILD_FIELDS = frozenset({"field_weight", "field_b", "long_fields", "name_field", "k1", "body_df"})


def idf(n: int, df: float) -> float:
    """BM25 IDF of a term held by ``df`` of ``n`` documents, smoothed by ``BACKGROUND``."""
    return math.log(1 + (n + BACKGROUND - df + 0.5) / (df + 0.5))


def df(held: int, in_short: int, body_df: float) -> float:
    """Document frequency of a term held by ``held`` documents, ``in_short`` of them in a short
    field: long-field-only holders count ``body_df`` each."""
    return in_short + body_df * (held - in_short)
