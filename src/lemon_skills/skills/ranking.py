"""Rank skills for a request. Pure: an index is built from entries, queries run over it.

A BM25 scorer over name, keywords, tags and description, with an abstain threshold.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .model import Entry

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "the",
        "this",
        "to",
        "use",
        "using",
        "want",
        "we",
        "what",
        "when",
        "with",
        "you",
        "your",
        "need",
        "help",
        "can",
        "do",
        "should",
    ]
)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stop words."""
    return [t for t in _WORD.findall(text.lower()) if t not in _STOP and len(t) > 1]


@dataclass(frozen=True, slots=True)
class Match:
    """One ranked skill with the parts its score is made of."""

    entry: Entry
    score: float
    parts: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Index:
    """Term statistics over a fixed set of entries."""

    entries: tuple[Entry, ...]
    docs: tuple[Counter[str], ...]
    lengths: tuple[int, ...]
    df: Mapping[str, int]
    avg_len: float


def build_index(entries: Sequence[Entry]) -> Index:
    """Tokenise every entry once."""
    docs = []
    for e in entries:
        text = " ".join(
            [e.key.replace("-", " "), e.name, e.description, *e.manifest.keywords, *e.manifest.tags]
        )
        docs.append(Counter(tokens(text)))
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    lengths = tuple(sum(d.values()) for d in docs)
    avg = sum(lengths) / len(lengths) if lengths else 1.0
    return Index(tuple(entries), tuple(docs), lengths, dict(df), avg or 1.0)


def rank(index: Index, query: str, *, limit: int = 3, threshold: float = 1.5) -> list[Match]:
    """Best-first matches scoring at least ``threshold``; project skills win ties."""
    terms = list(dict.fromkeys(tokens(query)))
    n = len(index.entries)
    if not terms or n == 0:
        return []
    out: list[Match] = []
    for entry, doc, length in zip(index.entries, index.docs, index.lengths, strict=True):
        parts: dict[str, float] = {}
        for t in terms:
            tf = doc.get(t, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - index.df[t] + 0.5) / (index.df[t] + 0.5))
            parts[t] = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / index.avg_len))
        score = sum(parts.values())
        if score >= threshold:
            out.append(Match(entry, score, parts))
    out.sort(key=lambda m: (-m.score, m.entry.source != "project", m.entry.key))
    return out[:limit]
