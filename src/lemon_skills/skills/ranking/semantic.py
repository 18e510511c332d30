"""Optional semantic similarity for ranking skills: a sentence embedding of each skill's key
words and description (the model and its vector cache are ``lemon_skills.search.embed``).

The lexical ranker stays the default: embedding a query costs about 10 ms (twenty times a
lexical ranking) and a first run embeds every skill once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lemon_skills.search import tokens as text
from lemon_skills.search.embed import (
    INSTALL_HINT,
    MODEL_PACKAGE,
    Encoder,
    centre,
    centred,
    encoder,
    requested,
    store_path,
    top_similar,
    vectors,
)
from lemon_skills.search.index import Index
from lemon_skills.search.scoring import said
from lemon_skills.skills.format.model import Entry

__all__ = [
    "INSTALL_HINT",
    "MODEL_PACKAGE",
    "Encoder",
    "Similarity",
    "doc_text",
    "doc_vectors",
    "encoder",
    "requested",
    "store_path",
]


def doc_text(entry: Entry) -> str:
    """What is embedded for a skill: its key words and its description."""
    return f"{' '.join(text.key_words(entry.key))}: {entry.description}"


def doc_vectors(entries: Sequence[Entry], enc: Encoder) -> Any:
    """A matrix with one unit vector per entry, embedding only texts not cached yet."""
    return vectors([doc_text(e) for e in entries], enc)


class Similarity:
    """Cosine similarity of a query to every skill of one index (memoised per view), every
    vector centred on the mean of these skills' vectors (``search.embed.centred``)."""

    def __init__(
        self, entries: Sequence[Entry], enc: Encoder | None = None, *, core: Index | None = None
    ) -> None:
        self.enc = enc or encoder()
        self.matrix, self.mean = centred(doc_vectors(entries, self.enc))
        #: The lexical index of the same skills: which names in a request some skill states.
        self.core = core

    def __call__(self, query: str, *, floor: float, top: int = 50) -> dict[int, float]:
        """Skill number -> similarity, for the ``top`` most similar skills above ``floor``;
        names no skill states (ticket ids, paths, hashes) are not embedded."""
        if self.core is not None:
            query = said(self.core, query)
        return top_similar(self.matrix, query, self.enc, floor=floor, top=top, mean=self.mean)

    def scores(self, query_vectors: Any) -> Any:
        """Similarity of each of the (raw, unit) ``query_vectors`` to every skill, one row each."""
        return centre(query_vectors, self.mean) @ self.matrix.T
