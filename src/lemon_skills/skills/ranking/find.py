"""Rank skills for a request: ``lemon_skills.search`` over the skills' documents.

The signals (BM25F over name, keywords, description, headings, "When to use" sections and
body; typo and compound readings; phrases; exact name; coverage; the abstain bar) are
corpus-neutral and live in ``lemon_skills.search.scoring``; this module maps its matches back
to skills.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lemon_skills.search import scoring
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking.index import DEFAULT_WEIGHTS, Index, Weights, build_index

__all__ = [
    "DEFAULT_WEIGHTS",
    "Index",
    "Match",
    "Weights",
    "build_index",
    "clears_bar",
    "near_misses",
    "rank",
]


@dataclass(frozen=True, slots=True)
class Match:
    """One ranked skill with the parts its score is made of (see ``search.scoring.explain``)."""

    entry: Entry
    score: float
    parts: Mapping[str, float] = field(default_factory=dict)


def rank(
    index: Index, query: str, *, limit: int = 3, similar: Mapping[int, float] | None = None
) -> list[Match]:
    """Best-first matches, ``[]`` when no skill is relevant; project skills win ties.

    ``similar`` (skill number -> cosine similarity of its embedding to the query's) switches
    on hybrid ranking: similarity above a floor adds to the lexical score.
    """
    found = scoring.rank(index.core, query, limit=limit, similar=similar)
    return [Match(index.entries[m.doc], m.score, m.parts) for m in found]


def near_misses(
    index: Index, query: str, *, limit: int = 3, similar: Mapping[int, float] | None = None
) -> list[Match]:
    """The best skills for ``query`` without abstaining, each with its ``evidence``: what an
    empty answer is explained with."""
    p = scoring.pool(index.core, query, limit=limit, similar=similar)
    if p is None:
        return []
    return [Match(index.entries[d], p.final[d], scoring.parts_of(index.core, p, d)) for d in p.best]


def clears_bar(match: Match, weights: Weights, *, semantic: bool) -> bool:
    """True when ``match`` would be answered on its own (see ``search.scoring.clears_bar``)."""
    return scoring.clears_bar(match.parts, weights, semantic=semantic)
