"""Compound words: the one corpus-wide step of tokenising.

A word like ``firecrawl`` counts as its parts ("fire", "crawl") when both are words of the
corpus and fewer documents state the compound than either part. A document's first name always
lends its compound parts to the name field. After an edit the decisions are worked out from the
changed documents alone whenever no decision of a kept document flips.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lemon_skills.search import tokens
from lemon_skills.search.analysis import Analysed, Shorts
from lemon_skills.search.schema import Weights

Pair = tuple[str, str]


def decompound(word: str, lexicon: Mapping[str, str]) -> tuple[str, str] | None:
    """Split a compound like ``firecrawl`` into the terms of two known words."""
    if len(word) < 7 or not word.isalpha():
        return None
    for k in range(3, len(word) - 2):
        head, tail = word[:k], word[k:]
        if head in lexicon and tail in lexicon:
            return lexicon[head], lexicon[tail]
    return None


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


def name_parts_of(first: Sequence[str], lexicon: Mapping[str, str]) -> tuple[Pair, ...]:
    return tuple(p for w in first if (p := decompound(w, lexicon)))


def short_cols(weights: Weights) -> tuple[list[int], list[int]]:
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


def decide(
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
    _, splittable = short_cols(weights)
    for a in shorts:
        for n in splittable:
            for w in a.short_words[n]:
                if w not in c.splits:
                    p, c.splits[w] = decide(w, lexicon, c.held)
                    if p is not None:
                        c.candidates[w] = p


def compounds(
    shorts: Sequence[Analysed], firsts: Sequence[Sequence[str]], weights: Weights
) -> Compounds:
    """The compound decisions of a whole corpus (``firsts``: each document's first name as
    words)."""
    lexicon = _merged_lexicon(shorts)
    name_parts = [name_parts_of(first, lexicon) for first in firsts]
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
    short, splittable = short_cols(weights)
    if weights.name_field in weights.field_weight and parts:
        at = weights.fields.index(weights.name_field)
        out.setdefault(at, Counter()).update(t for p in parts for t in p)
    for n in splittable:
        for w in a.short_words[n]:
            if (pair := c.splits.get(w)) is not None:
                out.setdefault(short[n], Counter()).update(pair)
    return out


def short_fields(
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


def first(labels: tuple[str, ...]) -> list[str]:
    """The words of a document's first name (its labels are its names as key words)."""
    return labels[0].split() if labels else []


def recompound(
    old: Compounds,
    old_shorts: Shorts,
    shorts: Shorts,
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
    if words.keys() == old.lexicon.keys():
        fast = _recompound_changed(old, old_shorts, shorts, labels, fresh, old_of, gone, weights)
        if fast is not None:
            return fast, []
    every = shorts.all()
    c = compounds(every, [first(lab) for lab in labels], weights)
    redo = [
        n
        for n, i in old_of.items()
        if _added(old_shorts[i], old.name_parts[i], old, weights)
        != _added(every[n], c.name_parts[n], c, weights)
    ]
    return c, sorted(redo)


def _recompound_changed(
    old: Compounds,
    old_shorts: Shorts,
    shorts: Shorts,
    labels: Sequence[tuple[str, ...]],
    fresh: Mapping[int, Analysed],
    old_of: Mapping[int, int],
    gone: Sequence[int],
    weights: Weights,
) -> Compounds | None:
    """Compound decisions after an edit that left the lexicon as it was, or None when one
    of the old decisions flips (a kept document's counts would change)."""
    lexicon = old.lexicon  # same words, and a word's term is its stem
    held = Counter(old.held)
    touched: set[str] = set()
    for i in gone:
        terms = _held_terms(old_shorts[i], old.name_parts[i], weights)
        held.subtract(terms)
        touched |= terms
    # The lexicon is the same, so a kept document's name parts are too.
    name_parts: list[tuple[Pair, ...]] = []
    for n in range(len(shorts)):
        if n in fresh:
            parts = name_parts_of(first(labels[n]), lexicon)
            terms = _held_terms(fresh[n], parts, weights)
            held.update(terms)
            touched |= terms
        else:
            parts = old.name_parts[old_of[n]]
        name_parts.append(parts)
    changed = {t for t in touched if held[t] != old.held[t]}
    for w, p in old.candidates.items():
        if (p[0] in changed or p[1] in changed or tokens.stem(w) in changed) and decide(
            w, lexicon, held
        )[1] != old.splits.get(w):
            return None
    drop_spent(held, touched)
    c = Compounds(lexicon, held, name_parts, dict(old.splits), dict(old.candidates))
    _decide_new(fresh.values(), c, lexicon, weights)
    return c


def drop_spent(counts: Counter[str], keys: Iterable[str]) -> None:
    """Remove those of ``keys`` whose count fell to zero (as ``+counts`` would, without
    visiting every key)."""
    for k in keys:
        if counts.get(k, 0) <= 0:
            counts.pop(k, None)
