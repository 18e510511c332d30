"""An index of one query's terms only: a first answer before the full index exists.

Tokenising every long field (skill bodies: most of a corpus's text) and stemming every word of
every short field is what makes a first index slow. One query only ever looks up a few terms:
its words' stems, two adjacent words glued, their compound parts and typo fixes among the
short fields' words, and its adjacent pairs as phrases. A focused index counts only those, and
counts them exactly: the short fields are split into words at C speed and only the words of
those terms are stemmed and counted, compound splits are decided by the same rule over the
same document frequencies, and long fields are searched for the terms' words by one regular
expression.
Every count, length and document frequency the query reads equals the full index's, except
one: a long field's length, which would need every word of it counted, is estimated from its
characters (``long_lengths`` supplies the true ones). ``docs/ranking.md`` gives how often the
first answers agree.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lemon_skills.search import tokens
from lemon_skills.search.analysis import bigrams
from lemon_skills.search.compounds import (
    Pair,
    decide,
    decompound,
    first,
    name_parts_of,
    short_cols,
)
from lemon_skills.search.index import Index, assemble, labels_of, names_of
from lemon_skills.search.postings import Builder
from lemon_skills.search.schema import Document, Weights
from lemon_skills.search.store import Store

#: Exactly the words ``tokens.is_content`` refuses, among the words ``tokens.words`` yields:
#: membership of a set can be tested for a whole field at C speed.
NON_CONTENT = frozenset(
    tokens.STOP_WORDS
    | set(string.ascii_lowercase + string.digits)
    | {f"{i:02d}" for i in range(100)}
)
#: Snowball's irregular words whose stem is no prefix of them once its changed last letter is
#: dropped ("dying" -> "die", "skies" -> "sky").
_IRREGULAR = {"die": ("di", "dy"), "lie": ("li", "ly"), "tie": ("ti", "ty"), "sky": ("sk",)}


def surface_prefixes(term: str) -> tuple[str, ...]:
    """Prefixes every word stemming to ``term`` starts with: Snowball English rewrites only a
    word's last letters ("hoping" -> "hope"). ``test_focus`` checks it over a vocabulary."""
    if len(term) <= 2 or not term.isalpha():
        return (term,)  # such words are never stemmed
    if term in _IRREGULAR:
        return _IRREGULAR[term]
    if term.endswith("ble"):
        return (term[:-2],)  # "ability" -> "able"
    if term[-1] in "ei" or term.endswith("bl"):
        return (term[:-1],)  # "happy" -> "happi", "reliability" -> "reliabl"
    return (term,)


def reachable_terms(query: str, lexicon: Mapping[str, str]) -> set[str]:
    """Every term ranking ``query`` may look up (a superset of ``scoring.analyse``'s)."""
    content = [w for w in tokens.words(query) if tokens.is_content(w)]
    out = {tokens.stem(w) for w in content}
    out.update(tokens.stem(a + b) for a, b in zip(content, content[1:], strict=False))
    by_length: dict[int, list[str]] = {}
    if any(len(w) >= 4 for w in content):
        for x in lexicon:
            by_length.setdefault(len(x), []).append(x)
    for w in set(content):
        parts = decompound(w, lexicon)
        if parts:
            out.update(parts)
        if len(w) >= 4:  # a typo fix is one edit away: at most one letter longer or shorter
            near = (x for n in (len(w) - 1, len(w), len(w) + 1) for x in by_length.get(n, ()))
            out.update(lexicon[x] for x in near if tokens.within_one_edit(w, x))
    return out


class Occurrences:
    """Counts the words of a set of terms in a text, as ``tokens.term_counts`` would count
    them. One regular expression finds the words starting with any of the terms' prefixes
    (a trie of them, so each word start is tried once, not once per term: a long request
    reaches dozens of terms); only those words are stemmed."""

    def __init__(self, terms: Iterable[str]) -> None:
        self.terms = frozenset(terms)
        prefixes = {p for t in self.terms for p in surface_prefixes(t)}
        self._words = re.compile(f" ({_trie(prefixes)}[a-z0-9]*)") if prefixes else None

    def __call__(self, text: str) -> Counter[str]:
        out: Counter[str] = Counter()
        if self._words is None:
            return out
        terms = self.terms
        for word, n in Counter(self._words.findall(tokens.spaced(text))).items():
            if word not in NON_CONTENT and (t := tokens.stem(word)) in terms:
                out[t] += n
        return out


def _trie(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words`` (non-empty), factored by prefix."""
    root: dict[str, Any] = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a focused index counts: the query's terms and phrases, and where their words are."""

    terms: frozenset[str]
    phrases: frozenset[str]
    relevant: dict[str, str]  # short-field word -> its term, for the words worth counting
    splits: dict[str, Pair]  # compound words counted as their parts
    found: list[list[list[str]]]  # per document and short field: its relevant words, in order


def _plan(
    query: str,
    words: Sequence[Sequence[list[str]]],
    vocabulary: Iterable[str],
    lexicon: Mapping[str, str],
    name_parts: Sequence[tuple[Pair, ...]],
) -> _Plan:
    terms = reachable_terms(query, lexicon)
    stems = [tokens.stem(w) for w in tokens.words(query) if tokens.is_content(w)]
    # A compound word counts as its parts where fewer documents state it than either part:
    # the decision changes the counts of the query's terms when one of them is a part.
    compounds = {
        w: p for w in lexicon if (p := decompound(w, lexicon)) and (p[0] in terms or p[1] in terms)
    }
    judged = {tokens.stem(w) for w in compounds} | {t for p in compounds.values() for t in p}
    relevant = {
        w: t
        for w in vocabulary
        if w not in NON_CONTENT and ((t := tokens.stem(w)) in terms or t in judged)
    }
    found = [[list(filter(relevant.__contains__, ws)) for ws in doc] for doc in words]
    held: Counter[str] = Counter()
    for doc_found, parts in zip(found, name_parts, strict=True):
        mine = {relevant[w] for ws in doc_found for w in ws}
        mine.update(t for p in parts for t in p)
        held.update(mine & judged)
    splits = {w: p for w, p in compounds.items() if decide(w, lexicon, held)[1]}
    return _Plan(frozenset(terms), frozenset(bigrams(stems)), relevant, splits, found)


def focused_index(
    docs: Sequence[Document],
    weights: Weights,
    query: str,
    *,
    long_lengths: Mapping[str, Sequence[int]] | None = None,
) -> Index:
    """The index of ``docs`` as far as ranking ``query`` reads it. It has no store: it can
    be neither updated nor saved."""
    fields = weights.fields
    short, _ = short_cols(weights)
    # One string per distinct word, not per occurrence: a large tree's short fields hold
    # millions of words and a vocabulary of tens of thousands (``canon``'s keys).
    canon: dict[str, str] = {}
    words = [
        [
            list(map(canon.setdefault, ws, ws))
            for ws in (tokens.spaced(d.fields.get(fields[j], "")).split() for j in short)
        ]
        for d in docs
    ]
    lexicon = _lexicon(canon)
    labels = tuple(labels_of(d) for d in docs)
    name_parts = [name_parts_of(first(lab), lexicon) for lab in labels]
    plan = _plan(query, words, canon, lexicon, name_parts)
    builder = Builder(len(fields), {})
    lengths = np.zeros((len(docs), len(fields)), dtype=np.int32)
    if docs:
        lengths[:, short] = [
            [len(ws) - sum(map(NON_CONTENT.__contains__, ws)) for ws in doc] for doc in words
        ]
    _count_short(builder, words, plan, name_parts, weights)
    occurrences = Occurrences(plan.terms)
    for j, f in enumerate(fields):
        if f in weights.long_fields:
            given = long_lengths.get(f) if long_lengths is not None else None
            for n, doc in enumerate(docs):
                text = doc.fields.get(f, "")
                builder.add(n, j, occurrences(text))
                lengths[n, j] = len(text) if given is None else given[n]
    ids = builder.ids
    store = Store(builder.rows(), list(ids), ids, lengths, None)
    keys = tuple(d.key for d in docs)
    priority = tuple(d.priority for d in docs)
    index = assemble(keys, priority, store, names_of(labels), lexicon, weights)
    return replace(index, store=None)


def _count_short(
    builder: Builder,
    words: Sequence[Sequence[list[str]]],
    plan: _Plan,
    name_parts: Sequence[tuple[Pair, ...]],
    weights: Weights,
) -> None:
    """Count the plan's terms and phrases in every short field, as ``build_index`` does."""
    short, splittable = short_cols(weights)
    name_at = (
        short.index(weights.fields.index(weights.name_field))
        if weights.name_field in weights.fields
        else -1
    )
    terms, relevant, splits = plan.terms, plan.relevant, plan.splits
    pairs = [tuple(p.split(" ")) for p in plan.phrases]
    for n, doc_found in enumerate(plan.found):
        for k, rel in enumerate(doc_found):
            parts = name_parts[n] if k == name_at else ()
            if not rel and not parts:
                continue
            counts = Counter(t for w in rel if (t := relevant[w]) in terms)
            if k in splittable:
                counts.update(t for w in rel if w in splits for t in splits[w] if t in terms)
            counts.update(t for p in parts for t in p if t in terms)
            if pairs and len(rel) > 1 and _may_hold(rel, relevant, pairs):
                counts.update(_phrases(words[n][k], relevant, plan.phrases))
            builder.add(n, short[k], counts)


def _lexicon(vocabulary: Iterable[str]) -> dict[str, str]:
    """Each content word of 3+ letters of the short fields' ``vocabulary`` -> its term."""
    return {w: tokens.stem(w) for w in vocabulary if len(w) >= 3 and w not in NON_CONTENT}


def _may_hold(
    rel: Sequence[str], relevant: Mapping[str, str], pairs: Sequence[tuple[str, ...]]
) -> bool:
    """Whether a field with the relevant words ``rel`` holds both terms of some phrase."""
    held = {relevant[w] for w in rel}
    return any(a in held and b in held for a, b in pairs)


def _phrases(
    ws: Sequence[str], relevant: Mapping[str, str], phrases: frozenset[str]
) -> Counter[str]:
    """The counts of ``phrases`` (adjacent term pairs) among the content words of ``ws``: a
    phrase's terms are relevant, so any other word only breaks a pair."""
    terms = [relevant.get(w, "") for w in ws if w not in NON_CONTENT]
    return Counter(b for b in bigrams(terms) if b in phrases)
