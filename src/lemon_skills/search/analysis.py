"""Tokenising documents: what of a document does not depend on the others.

A document is analysed once per version (``stamp``, kept in a ``Memo``); an index keeps each
document's short fields in byte form (``Shorts``) and decodes one only when an update needs it.
"""

from __future__ import annotations

import itertools
import marshal
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from lemon_skills.search import tokens
from lemon_skills.search.schema import FORMAT, Document, Weights


def bigrams(terms: Sequence[str]) -> Iterable[str]:
    """Adjacent term pairs, the phrase keys of the index (``"merg pdf"``)."""
    return map(" ".join, zip(terms, terms[1:], strict=False))


def _short_counts(value: str) -> tuple[Counter[str], tuple[str, ...], list[str]]:
    raw, terms = tokens.content_terms(value)
    counts: Counter[str] = Counter(terms)
    counts.update(bigrams(terms))
    return counts, raw, terms


def _lexical(words: Sequence[str], terms: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(word, term) of each word of 3 letters or more (those typo fixes and compounds read)."""
    return itertools.compress(zip(words, terms, strict=True), [len(w) >= 3 for w in words])


FieldCounts = list[tuple[str, Counter[str], int]]


@dataclass(frozen=True, slots=True)
class Analysed:
    """One document tokenised: what does not depend on the other documents (never mutated)."""

    fields: tuple[tuple[str, Counter[str], int], ...]
    short_words: tuple[tuple[str, ...], ...]  # content words of each short field, in order
    lexicon: tuple[tuple[str, str], ...]  # (word, term) of the short-field words of 3+ letters


def dump_analysed(items: Iterable[tuple[Hashable, Analysed]]) -> bytes:
    """Tokenised documents by stamp as bytes for ``load_analysed`` (stamps must be tuples of
    strings and numbers)."""
    return marshal.dumps((FORMAT, [(stamp, _pack(a)) for stamp, a in items]))


def load_analysed(data: bytes) -> dict[Hashable, Analysed]:
    """The tokenised documents ``dump_analysed`` stored.

    Raises:
        ValueError: the bytes are not tokenised documents of this format.
    """
    try:
        version, rows = marshal.loads(data)  # noqa: S302 - our own cache file
        if version != FORMAT:
            raise ValueError("tokenised documents of another format")
        return {stamp: _unpack(packed) for stamp, packed in rows}
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not tokenised documents") from exc


def _pack(a: Analysed) -> tuple[Any, ...]:
    return ([(f, dict(c), n) for f, c, n in a.fields], a.short_words, a.lexicon)


def _unpack(packed: Any) -> Analysed:
    fields, short_words, lexicon = packed
    return Analysed(
        fields=tuple((f, Counter(c), n) for f, c, n in fields),
        short_words=tuple(short_words),
        lexicon=tuple(lexicon),
    )


def analyse_document(doc: Document, weights: Weights) -> Analysed:
    """Tokenise ``doc``'s fields (a missing field is empty)."""
    fields: list[tuple[str, Counter[str], int]] = []
    raw: list[tuple[str, ...]] = []
    lexicon: dict[str, str] = {}
    for fname in weights.fields:
        value = doc.fields.get(fname, "")
        if fname in weights.long_fields:
            counts = tokens.term_counts(value)
            fields.append((fname, counts, counts.total()))
        else:
            counts, words, terms = _short_counts(value)
            fields.append((fname, counts, len(terms)))
            raw.append(words)
            lexicon.update(_lexical(words, terms))
    return Analysed(fields=tuple(fields), short_words=tuple(raw), lexicon=tuple(lexicon.items()))


def without_long(a: Analysed, weights: Weights) -> Analysed:
    """``a`` keeping long fields' lengths only: their counts live in the rows."""
    fields = tuple(
        (f, Counter(), n) if f in weights.long_fields else (f, c, n) for f, c, n in a.fields
    )
    return Analysed(fields=fields, short_words=a.short_words, lexicon=a.lexicon)


Memo = MutableMapping[Hashable, Analysed]


def analysed(docs: Sequence[Document], weights: Weights, memo: Memo | None) -> Iterator[Analysed]:
    if memo is None:
        yield from (analyse_document(d, weights) for d in docs)
        return
    for doc in docs:
        a = memo.get(doc.stamp) if doc.stamp is not None else None
        if a is None:
            a = analyse_document(doc, weights)
            if doc.stamp is not None:
                memo[doc.stamp] = a
        yield a
    if len(memo) > 2 * len(docs) + 1_000:
        # Keep the current documents; older versions of edited ones are not asked for again.
        keep = {d.stamp: memo[d.stamp] for d in docs if d.stamp is not None and d.stamp in memo}
        memo.clear()
        memo.update(keep)


class Shorts:
    """Each document's short fields tokenised (``Analysed`` with long fields' counts dropped),
    kept in byte form until one is read: an update reads those of the documents it
    replaces, and writing the index back copies the bytes of the others."""

    __slots__ = ("_decoded", "_depth", "_items", "_weights")

    def __init__(self, items: Sequence[Analysed | bytes | memoryview], weights: Weights) -> None:
        self._items = items
        self._weights = weights
        self._decoded: dict[int, Analysed] = {}
        self._depth = 0  # how many ``remap`` layers ``items`` reads through

    def remap(self, source: list[int], fresh: Mapping[int, Analysed]) -> Shorts:
        """The short fields of a new list of documents: document ``n`` is this one's
        ``source[n]``, or ``fresh[n]`` where that is -1. Nothing is copied until a few
        remaps stack up."""
        items: Sequence[Analysed | bytes | memoryview] = _Remapped(self, source, fresh)
        depth = self._depth + 1
        if depth > _MAX_DEPTH:
            items, depth = [items[i] for i in range(len(source))], 0
        out = Shorts(items, self._weights)
        out._depth = depth
        return out

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> Analysed:
        decoded = self._decoded.get(i)
        if decoded is None:
            item = self._items[i]
            if isinstance(item, Analysed):
                return item
            words = marshal.loads(item)  # noqa: S302 - our own cache file
            decoded = self._decoded[i] = _from_words(words, self._weights)
        return decoded

    def raw(self, i: int) -> Analysed | bytes | memoryview:
        """Document ``i`` decoded if it was, else as stored."""
        decoded = self._decoded.get(i)
        return self._items[i] if decoded is None else decoded

    def blob(self, i: int) -> bytes | memoryview:
        """Document ``i`` in byte form."""
        item = self._items[i]
        return marshal.dumps(item.short_words) if isinstance(item, Analysed) else item

    def all(self) -> list[Analysed]:
        """Every document, decoded."""
        return [self[i] for i in range(len(self._items))]


#: Remaps read through before the items are copied out (every lookup walks the layers).
_MAX_DEPTH = 8


T = TypeVar("T")


class LazyItems(Sequence[T]):
    """A sequence whose items are worked out when read (``_at``); a slice reads each of its
    items the same way."""

    def _at(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self._at(k) for k in range(len(self))[i]]
        return self._at(i)


class _Remapped(LazyItems[Analysed | bytes | memoryview]):
    """An earlier document list's short fields renumbered, plus those of new documents."""

    def __init__(self, old: Shorts, source: list[int], fresh: Mapping[int, Analysed]) -> None:
        self._old = old
        self._source = source
        self._fresh = fresh

    def __len__(self) -> int:
        return len(self._source)

    def _at(self, i: int) -> Analysed | bytes | memoryview:
        s = self._source[i]
        return self._old.raw(s) if s >= 0 else self._fresh[i]


def _from_words(short_words: Sequence[Sequence[str]], weights: Weights) -> Analysed:
    """A document's short fields tokenised again from their content words (what is stored:
    the counts, phrases and lexicon follow from them as in ``analyse_document``)."""
    fields: list[tuple[str, Counter[str], int]] = []
    lexicon: dict[str, str] = {}
    it = iter(short_words)
    for fname in weights.fields:
        if fname in weights.long_fields:
            fields.append((fname, Counter(), 0))
            continue
        words = tuple(next(it))
        terms = [tokens.stem(w) for w in words]
        counts: Counter[str] = Counter(terms)
        counts.update(bigrams(terms))
        fields.append((fname, counts, len(terms)))
        lexicon.update((w, t) for w, t in zip(words, terms, strict=True) if len(w) >= 3)
    return Analysed(
        fields=tuple(fields),
        short_words=tuple(tuple(w) for w in short_words),
        lexicon=tuple(lexicon.items()),
    )
