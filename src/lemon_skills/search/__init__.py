"""Corpus-neutral lexical search: rank any documents made of named text fields.

Skills (``lemon_skills.skills.ranking``) and MCP tools rank with it; each only says how one of
its things becomes a ``Document`` and which fields weigh what. The whole API::

    from lemon_skills import search

    weights = search.Weights(
        field_weight={"name": 3.0, "description": 2.0, "body": 0.1},
        field_b={"name": 0.3, "description": 0.5, "body": 0.75},
        long_fields=frozenset({"body"}),  # bag-of-words fields: mentions, not topic
    )
    docs = [search.Document("pdf-merge", {"name": "pdf merge", "description": "..."},
                            names=("pdf-merge",))]
    index = search.build_index(docs, weights)          # pure; reuse it for every query
    for m in search.rank(index, "merge two pdfs", limit=3):
        print(m.key, m.score, m.parts)                  # [] when nothing is relevant

* ``Document(key, fields, names=(), priority=0, stamp=None)``: ``names`` typed in full put the
  document first; ``priority`` breaks ties (higher first); ``stamp`` lets a ``memo`` passed to
  ``build_index`` tokenise one version of a document once.
* ``build_index(docs, weights, memo=None) -> Index``; ``update_index(index, docs)`` the same
  made from an index of an earlier state of the documents, tokenising only those whose
  ``stamp`` it lacks (equal to a fresh build); ``dumps(index)`` / ``loads(data, weights)`` a
  byte form for an on-disk cache (``data`` may be a memory map: a query reads only its terms'
  rows); ``dump_analysed`` / ``load_analysed`` a memo's tokenised documents.
* ``rank(index, query, limit=3, similar=None) -> list[Match]``: ``Match(doc, key, score, parts)``,
  where ``parts`` are the score's pieces (``term:STEM``, ``phrase``, ``exact_name``, ``coverage``,
  ``short_fields``, ``score``, ``evidence``); ``similar`` (document number -> cosine similarity)
  blends an embedding ranker in. ``clears_bar(match, weights, semantic=)`` tells whether a match
  would be answered on its own (the relevance bar ``rank`` applies to the first result).
* Tokens (``search.tokens``): ``words``, ``key_words``, ``identifier_words`` (camelCase too),
  ``terms``, ``stem``.
* Metrics (``search.metrics``): ``Case``, ``load_cases``, ``evaluate(cases, ranker) -> Report``
  (recall@1/3/5, MRR, none-rejection, false-rejection, per kind, misses),
  ``cross_validate(cases, answers, k)`` (each fold answered by the candidate best on the others),
  ``stratified_folds``, ``objective``.

Scores are in units of the rarest possible term, so ``Weights.min_score`` means the same for 5
documents as for 10,000. See ``schema`` for the fields, ``index`` for BM25F and ``scoring``
for the signals.
"""

from __future__ import annotations

from lemon_skills.search.analysis import dump_analysed, load_analysed
from lemon_skills.search.codec import dumps, loads
from lemon_skills.search.index import Index, build_index, update_index
from lemon_skills.search.metrics import (
    Case,
    CrossValidation,
    Report,
    cross_validate,
    evaluate,
    load_cases,
)
from lemon_skills.search.schema import Document, Weights
from lemon_skills.search.scoring import Match, clears_bar, explain, rank

__all__ = [
    "Case",
    "CrossValidation",
    "Document",
    "Index",
    "Match",
    "Report",
    "Weights",
    "build_index",
    "clears_bar",
    "cross_validate",
    "dump_analysed",
    "dumps",
    "evaluate",
    "explain",
    "load_analysed",
    "load_cases",
    "loads",
    "rank",
    "update_index",
]
