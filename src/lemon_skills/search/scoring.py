"""Rank the documents of an index for a query. Pure: an index in, matches out.

The score of a document is BM25F over its fields (see ``index``), and on top of that:

* a query word found in no document is read as a compound of two known words ("hackernews")
  or matched to a word one edit away ("kubernets"), at a discount;
* two query words glued together may name a name word ("hacker news" -> ``hackernews``);
* two query words adjacent in a short field add a phrase bonus;
* a query that is one of a document's names puts that document first;
* the score is scaled by the share of the query's information (IDF mass) the document
  matched, so one matching a single rare word by chance does not beat one matching the whole
  request.

Term weights use an IDF in which a document holding a word only in a long field counts for
less than one stating it in a short field (``Weights.body_df``): it measures how many
documents are *about* a word, not how many say it in passing.

The ranker abstains: it answers only when the best document's evidence (its score in plain
IDF, see ``evidence``), in units of the rarest possible term (so the bar means the same for 5
documents as for 10,000), clears ``Weights.min_score``, so a request nothing is about gets
``[]``. Every match carries its score parts for explaining.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from lemon_skills.search import tokens as text
from lemon_skills.search.analysis import bigrams
from lemon_skills.search.compounds import decompound
from lemon_skills.search.index import Index
from lemon_skills.search.schema import Weights


@dataclass(frozen=True, slots=True)
class Match:
    """One ranked document (its number in the index and its key) with its score parts."""

    doc: int
    key: str
    score: float
    parts: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One index term looked up for a query."""

    term: str
    weight: float  # 1 for a word as typed, less for a typo fix or a compound part
    credit: float  # IDF mass of the query words it stands for
    source: str = ""  # the query word(s) it was derived from, when not typed as such
    words: tuple[str, ...] = ()  # the query's content words it stands for


@dataclass(frozen=True, slots=True)
class Query:
    """A query analysed against one index."""

    terms: tuple[QueryTerm, ...]
    phrases: tuple[str, ...]
    mass: float  # IDF mass of every content word; unknown words count as the rarest
    name: str  # the query written as key words, for the exact-name match
    words: int = 0  # distinct content words some document holds (through any reading)
    content: int = 0  # distinct content words


def _fuzzy(index: Index, word: str) -> list[str]:
    """Terms of short-field words one edit away from ``word`` (4+ letters only)."""
    if len(word) < 4:
        return []
    keys = index.fuzzy_keys
    if not keys:
        table: dict[str, list[str]] = {}
        for w in index.lexicon:
            if len(w) >= 4:
                for d in text.deletions(w):
                    table.setdefault(d, []).append(w)
        # One C-level update, so a concurrent query never sees half a table.
        keys.update({k: tuple(v) for k, v in table.items()})
    found: dict[str, None] = {}
    for d in text.deletions(word):
        for w in keys.get(d, ()):
            if text.within_one_edit(word, w):
                found[index.lexicon[w]] = None
    # Sorted, so equally likely readings are summed in one order whatever the lexicon's.
    return sorted(t for t in found if t in index.postings)


def _likely(index: Index, word: str) -> list[str]:
    """The typo readings of ``word`` worth trying: the commonest word one edit away wins,
    as in a spelling corrector, and readings at least half as common stay in the running."""
    alts = _fuzzy(index, word)
    if len(alts) <= 1:
        return alts
    # A reading that is another form of the word itself ("parsed" -> "parser") shows the
    # catalogue knows the word: it is no typo, and an unrelated word ("passed") is not read.
    root = text.stem(word)
    alts = [a for a in alts if a.startswith(root)] or alts
    idf = index.plain_idf  # "commonest" counts every mention, body included
    best = min(idf[a] for a in alts)
    return [a for a in alts if idf[a] <= best + math.log(2)]


def unstated(index: Index, query: str) -> set[str]:
    """The words of ``query``'s names (``tokens.opaque_tokens``: numbers, versions, hashes,
    ticket ids, ports, paths, URLs) that no document states: one whose short fields hold every
    word of the name ("404", "python3.12") is about it; bodies mention names in passing."""
    drop: set[str] = set()
    keep: set[str] = set()
    for name in text.opaque_tokens(query):
        (keep if _stated(index, name) else drop).update(name)
    return drop - keep


def _stated(index: Index, words: Sequence[str]) -> bool:
    docs: npt.NDArray[np.int32] | None = None
    for w in words:
        p = index.postings.get(text.stem(w))
        if p is None:
            return False
        held = p.docs[p.strong]
        docs = held if docs is None else np.intersect1d(docs, held, assume_unique=True)
        if not len(docs):
            return False
    return True


def analyse(index: Index, query: str, *, plain: bool = False) -> Query:
    """Map ``query`` onto index terms: as typed, compound parts, typo fixes, glued pairs.

    A name (a number, version, hash, ticket id, port, path or URL) is left out unless some
    document states it whole in a short field (``unstated``): no document is about "1234",
    and counting it as an unknown word would take the match from "the postgres migration for
    issue 1234"; a document whose description says "404" is about that number.

    Credits and mass use the ranking IDF, or with ``plain`` the plain IDF the abstain
    check is made in.
    """
    names = unstated(index, query)
    content = [w for w in text.words(query) if text.is_content(w) and w not in names]
    stems = [text.stem(w) for w in content]
    rare = index.idf_of_unknown()
    idf = index.plain_idf if plain else index.idf
    found: dict[str, QueryTerm] = {}
    mass = 0.0

    def add(qt: QueryTerm) -> None:
        old = found.get(qt.term)
        if old is None or old.weight * old.credit < qt.weight * qt.credit:
            found[qt.term] = qt

    for s, w in dict(zip(stems, content, strict=True)).items():
        if s in index.postings:
            mass += idf[s]
            add(QueryTerm(s, 1.0, idf[s], words=(w,)))
            continue
        parts = decompound(w, index.lexicon)
        alts = [p for p in parts if p in index.postings] if parts else _likely(index, w)
        if not alts:
            mass += rare
            continue
        top = max(idf[a] for a in alts)
        mass += top
        # Compound parts share the word; so do equally likely typo readings.
        share = 1.0 / len(alts)
        weight = index.weights.fuzzy * (1.0 if parts else share)
        for alt in alts:
            add(QueryTerm(alt, weight, top * share, w, (w,)))
    for i in range(len(content) - 1):
        glued = text.stem(content[i] + content[i + 1])
        if glued in index.postings and glued not in found:
            credit = idf.get(stems[i], rare) + idf.get(stems[i + 1], rare)
            source = f"{content[i]} {content[i + 1]}"
            pair = (content[i], content[i + 1])
            add(QueryTerm(glued, 1.0, min(credit, 2 * idf[glued]), source, pair))
    phrases = tuple(b for b in dict.fromkeys(bigrams(stems)) if b in index.postings)
    name = " ".join(text.key_words(query))
    known = {w for qt in found.values() for w in qt.words}
    return Query(tuple(found.values()), phrases, mass, name, len(known), len(set(content)))


@dataclass(slots=True)
class _Tally:
    """Per-document sums over the query terms, in flat arrays indexed by document number."""

    score: npt.NDArray[np.float64]
    covered: npt.NDArray[np.float64]
    strong: npt.NDArray[np.float64]


def _tally(index: Index, q: Query) -> _Tally:
    # Each term adds to its documents in one array operation, in the order of the query's
    # terms: the same additions, in the same order, as a loop over documents would make.
    n = len(index)
    score, covered, strong = np.zeros(n), np.zeros(n), np.zeros(n)
    body_share = index.weights.body_credit
    for qt in q.terms:
        p = index.postings[qt.term]
        mult = qt.weight * index.idf[qt.term]
        credit = qt.weight * qt.credit
        part = mult * p.weights
        score[p.docs] += part
        covered[p.docs] += np.where(p.strong, credit, credit * body_share)
        strong[p.docs[p.strong]] += part[p.strong]
    bonus = index.weights.phrase
    for phrase in q.phrases:
        p = index.postings[phrase]
        part = bonus * index.idf[phrase] * p.weights
        score[p.docs] += part
        strong[p.docs] += part
    return _Tally(score, covered, strong)


def _powers(values: npt.NDArray[np.float64], power: float) -> npt.NDArray[np.float64]:
    """``values ** power`` as Python computes it, once per distinct value (few: a coverage
    is a sum over a handful of query terms), so scores match the scalar definition exactly."""
    distinct, at = np.unique(values, return_inverse=True)
    return np.asarray([v**power for v in distinct.tolist()], dtype=np.float64)[at]


def _best(final: Mapping[int, float], prio: Sequence[int], limit: int) -> list[int]:
    return heapq.nsmallest(limit, final, key=lambda d: (-final[d], -prio[d], d))


def _finals(
    index: Index, q: Query, t: _Tally, sims: Mapping[int, float], limit: int
) -> dict[int, float]:
    """The final scores of the documents that can be among the ``limit`` best (ties
    included): coverage-scaled lexical score plus the semantic bonus."""
    wts = index.weights
    # In units of the rarest possible term, so the thresholds mean the same for 5 documents
    # as for 10,000.
    unit = 1.0 / index.idf_of_unknown()
    docs = np.flatnonzero(t.covered)
    if sims:
        docs = np.union1d(docs, np.fromiter(sims, dtype=np.int64, count=len(sims)))
    if not len(docs):
        return {}
    ratio = np.minimum(1.0, t.covered[docs] / q.mass)
    scores = t.score[docs] * (unit * _powers(ratio, wts.coverage_power))
    if sims:
        scores = scores + np.asarray([_semantic_bonus(wts, sims.get(d)) for d in docs.tolist()])
    if len(docs) > limit:
        cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        keep = scores >= cut
        docs, scores = docs[keep], scores[keep]
    return dict(zip(docs.tolist(), scores.tolist(), strict=True))


@dataclass(frozen=True, slots=True)
class Pool:
    """Every document a query touches, scored, before the abstain check (see ``pool``)."""

    query: Query  # analysed with the ranking IDF
    plain: Query  # analysed with the plain IDF the abstain check uses
    final: Mapping[int, float]  # document number -> final score (those that can be best)
    covered: npt.NDArray[np.float64]  # per document: query credit matched
    strong: npt.NDArray[np.float64]  # per document: score from short fields (before coverage)
    best: Sequence[int]  # the ``limit`` best documents, best first
    similar: Mapping[int, float] = field(default_factory=dict)


def pool(
    index: Index, query: str, *, limit: int = 3, similar: Mapping[int, float] | None = None
) -> Pool | None:
    """The ``limit`` best documents for ``query`` and the sums behind their scores, with no
    abstaining; ``None`` when the query has no content word or no document matches."""
    if not len(index) or limit <= 0:
        return None
    q = analyse(index, query)
    if not q.mass:
        return None
    wts = index.weights
    t = _tally(index, q)
    exact = index.names.get(q.name)
    if exact is not None:
        t.score[exact] += wts.exact_name
        t.strong[exact] += wts.exact_name
        t.covered[exact] = q.mass
    sims = similar or {}
    final = _finals(index, q, t, sims, limit)
    best = _best(final, index.priority, limit)
    if not best:
        return None
    plain = analyse(index, query, plain=True)
    return Pool(q, plain, final, t.covered, t.strong, best, sims)


def parts_of(index: Index, p: Pool, doc: int) -> dict[str, float]:
    """``doc``'s score parts (``explain``) with its ``evidence``."""
    wts = index.weights
    unit = 1.0 / index.idf_of_unknown()
    scale = unit * min(1.0, float(p.covered[doc]) / p.query.mass) ** wts.coverage_power
    strong = float(p.strong[doc]) * scale
    parts = explain(index, p.query, doc, score=p.final[doc], strong=strong, sims=p.similar)
    parts["evidence"] = evidence(index, p.plain, doc)
    return parts


def rank(
    index: Index, query: str, *, limit: int = 3, similar: Mapping[int, float] | None = None
) -> list[Match]:
    """Best-first matches, ``[]`` when nothing is relevant; higher ``priority`` wins ties.

    ``similar`` (document number -> cosine similarity of its embedding to the query's)
    switches on hybrid ranking: similarity above a floor adds to the lexical score.
    """
    p = pool(index, query, limit=limit, similar=similar)
    if p is None:
        return []
    wts = index.weights
    sims = p.similar
    top = p.best[0]
    bar = wts.semantic_min_score if similar is not None else wts.min_score
    if evidence(index, p.plain, top) + _semantic_bonus(wts, sims.get(top)) < bar:
        return []
    floor = p.final[top] * wts.keep_ratio
    out = []
    for d in p.best:
        if p.final[d] < floor:
            break
        out.append(Match(d, index.keys[d], p.final[d], parts_of(index, p, d)))
    return out


def clears_bar(parts: Mapping[str, float], weights: Weights, *, semantic: bool) -> bool:
    """True when a match with these score ``parts`` would be answered on its own: its evidence
    (plus its semantic bonus) reaches the abstain bar that ``rank`` applies to the best."""
    bar = weights.semantic_min_score if semantic else weights.min_score
    own = parts.get("evidence", parts.get("score", 0.0)) + parts.get("semantic", 0.0)
    return own >= bar


def evidence(index: Index, plain: Query, doc: int) -> float:
    """How strongly ``doc`` is about the query in plain IDF, where every document mentioning
    a word counts: the number the abstain bar is checked against.

    Ranking discounts words a document mentions only in a long field, which orders better
    but would let a request nothing is about (whose words turn up in some body) look
    specific; the abstain check therefore keeps plain IDF and full coverage weight.

    Two rules without parameters bound it. A match holding fewer of the query's known words
    (content words some document holds) than ``Weights.min_words``, or than the query has,
    is no evidence at all, unless a word it holds is in its key (names it): one word of a
    request ("weather" in "weather in Paris", where another skill mentions Paris) names a
    neighbourhood, not a topic, while a terse request naming the thing plus a URL or a
    path is about it; words no document holds are left to coverage. A document holding
    every content word of the query, one of them held by no other document, clears the bar
    however faint its share of the text: a word found in one place names that place.
    """
    if not plain.mass:
        return 0.0
    floor = 0.0
    parts, covered = _term_parts(index, plain, doc, index.plain_idf)
    score = sum(parts.values())
    if index.names.get(plain.name) == doc:
        score += index.weights.exact_name
        covered = plain.mass
    else:
        held = matched_words(index, plain, doc)
        if held < min(index.weights.min_words, plain.words) and not names_a_word(index, plain, doc):
            return 0.0
        if held == plain.content and _sole_holder(index, plain, doc):
            floor = index.weights.min_score
    unit = 1.0 / index.idf_of_unknown()
    share = min(1.0, covered / plain.mass)
    return max(floor, unit * score * math.pow(share, index.weights.abstain_coverage_power))


def matched_words(index: Index, q: Query, doc: int) -> int:
    """How many of ``q``'s content words ``doc`` holds (through any of their terms)."""
    words: set[str] = set()
    for qt in q.terms:
        if _weight(index, qt.term, doc):
            words.update(qt.words)
    return len(words)


def names_a_word(index: Index, q: Query, doc: int) -> bool:
    """True when a word of ``q`` that ``doc`` holds is in ``doc``'s key (its own name or a
    tool's server name): a request naming the thing is about it, however short."""
    key = {text.stem(w) for w in text.identifier_words(index.keys[doc]) if text.is_content(w)}
    return any(qt.term in key and _weight(index, qt.term, doc) for qt in q.terms)


def _sole_holder(index: Index, q: Query, doc: int) -> bool:
    """True when ``doc`` is the only document holding one of the words ``q`` has as typed."""
    for qt in q.terms:
        docs = index.postings[qt.term].docs
        if not qt.source and len(docs) == 1 and int(docs[0]) == doc:
            return True
    return False


def _term_parts(
    index: Index, q: Query, doc: int, idf: Mapping[str, float]
) -> tuple[dict[str, float], float]:
    """Each matched term's and the phrases' share of ``doc``'s score (before coverage
    scaling) under ``idf``, and the query credit those terms cover."""
    parts: dict[str, float] = {}
    covered = 0.0
    for qt in q.terms:
        w = _weight(index, qt.term, doc)
        if w:
            label = f"{qt.term}<-{qt.source}" if qt.source else qt.term
            parts[f"term:{label}"] = qt.weight * idf[qt.term] * w
            covered += qt.weight * qt.credit
    phrase = sum(index.weights.phrase * idf[b] * _weight(index, b, doc) for b in q.phrases)
    if phrase:
        parts["phrase"] = phrase
    return parts, covered


def _semantic_bonus(wts: Weights, sim: float | None) -> float:
    return 0.0 if sim is None else wts.semantic_weight * max(0.0, sim - wts.semantic_floor)


def explain(
    index: Index,
    q: Query,
    doc: int,
    *,
    score: float,
    strong: float,
    sims: Mapping[int, float] | None = None,
) -> dict[str, float]:
    """The parts of one document's score: each term, phrases, exact name, coverage, total.

    Parts are in units of the rarest possible term. Term and phrase parts are before the
    coverage scaling; ``score`` is after it.
    """
    unit = 1.0 / index.idf_of_unknown()
    raw, covered = _term_parts(index, q, doc, index.idf)
    parts = {name: unit * value for name, value in raw.items()}
    if index.names.get(q.name) == doc:
        parts["exact_name"] = unit * index.weights.exact_name
        covered = q.mass
    if sims and doc in sims:
        parts["similarity"] = sims[doc]
        parts["semantic"] = _semantic_bonus(index.weights, sims[doc])
    parts["coverage"] = min(1.0, covered / q.mass) if q.mass else 0.0
    parts["short_fields"] = strong
    parts["score"] = score
    return parts


def _weight(index: Index, term: str, doc: int) -> float:
    p = index.postings.get(term)
    if p is None:
        return 0.0
    return p.weight(doc)
