"""What an index keeps besides its rows so an edit can update it: each document's stamp,
short fields and names, and the corpus's compound decisions."""

from __future__ import annotations

import marshal
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lemon_skills.search import postings as rows_mod
from lemon_skills.search.analysis import Shorts
from lemon_skills.search.compounds import Compounds
from lemon_skills.search.schema import FORMAT


@dataclass(frozen=True, slots=True)
class Store:
    """An index's rows and what an update needs to know of each document."""

    rows: rows_mod.AnyRows
    terms: list[str]  # term id -> term
    ids: dict[str, int]  # term -> term id
    lengths: npt.NDArray[np.int32]  # documents x fields
    docs: DocState | StoredState | None  # None: the index can be neither updated nor stored


@dataclass(frozen=True, slots=True)
class DocState:
    stamps: tuple[Hashable | None, ...]
    shorts: Shorts
    labels: tuple[tuple[str, ...], ...]  # each document's names as key words
    compounds: Compounds
    #: Short-field word -> how many documents have it in their lexicon.
    words: Counter[str]


class StoredState:
    """A ``DocState`` still in its byte form: decoded only when an update needs it."""

    __slots__ = ("_data", "_decoded", "_lexicon", "_shorts", "stamps")

    def __init__(
        self,
        data: bytes | memoryview,
        shorts: Shorts,
        stamps: tuple[Hashable | None, ...],
        lexicon: dict[str, str],
    ) -> None:
        self._data = data
        self._shorts = shorts
        self._lexicon = lexicon
        self._decoded: DocState | None = None
        self.stamps = stamps

    def decode(self) -> DocState:
        if self._decoded is None:
            self._decoded = decode_state(self._data, self._shorts, self.stamps, self._lexicon)
        return self._decoded


def doc_state(store: Store) -> DocState:
    """What an update needs to know of ``store``'s documents.

    Raises:
        ValueError: the index keeps no document state (a focused index).
    """
    docs = store.docs
    if docs is None:
        raise ValueError("this index keeps no state of its documents")
    return docs if isinstance(docs, DocState) else docs.decode()


def encode_state(state: DocState) -> bytes:
    c = state.compounds
    return marshal.dumps(
        (
            FORMAT,
            state.labels,
            dict(c.held),
            c.name_parts,
            c.splits,
            c.candidates,
            dict(state.words),
        )
    )


def decode_state(
    data: bytes | memoryview,
    shorts: Shorts,
    stamps: tuple[Hashable | None, ...],
    lexicon: dict[str, str],
) -> DocState:
    fmt, labels, held, name_parts, splits, candidates, words = marshal.loads(data)  # noqa: S302
    if fmt != FORMAT:
        raise ValueError("search index of another format")
    return DocState(
        stamps,
        shorts,
        tuple(tuple(x) for x in labels),
        Compounds(lexicon, Counter(held), list(name_parts), splits, candidates),
        Counter(words),
    )
