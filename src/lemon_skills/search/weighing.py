"""Term weights on demand: each term's posting and IDF are weighed from the stored counts the
first time a query needs the term (a query touches a few dozen terms of tens of thousands)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from lemon_skills.search import postings as rows_mod
from lemon_skills.search.schema import Weights, df, idf
from lemon_skills.search.store import Store


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


class Postings(Mapping[str, Posting]):
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

    def __getitem__(self, term: str) -> Posting:
        p = self._done.get(term)
        if p is None:
            tid = self._store.ids.get(term)
            if tid is None:
                raise KeyError(term)
            docs, tf = self._store.rows.of_term(tid)
            if not len(docs):
                raise KeyError(term)
            weights = rows_mod.weigh(tf, docs, self._norm, self._order, self._k1)
            strong: npt.NDArray[np.bool_] = np.asarray((tf[:, self._short] > 0).any(axis=1))
            p = self._done[term] = Posting(docs, weights, strong)
        return p

    def __contains__(self, term: object) -> bool:
        if not isinstance(term, str):
            return False
        if term in self._done:
            return True
        tid = self._store.ids.get(term)
        return tid is not None and len(self._store.rows.of_term(tid)[0]) > 0

    def __iter__(self) -> Iterator[str]:
        terms = self._store.terms
        return (terms[t] for t in self._store.rows.held_terms().tolist())

    def __len__(self) -> int:
        return len(self._store.rows.held_terms())

    def df(self, term: str, body_df: float) -> float:
        """The document frequency of ``term``, long-field-only holders counting ``body_df``."""
        p = self[term]
        return df(len(p.docs), int(np.count_nonzero(p.strong)), body_df)


class Idf(Mapping[str, float]):
    """IDF computed on first use from the postings."""

    def __init__(self, postings: Postings, n: int, body_df: float) -> None:
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
