"""Text normalisation for search: word splitting, stop words, stemming and edit distance.

Pure functions over strings, shared by the index builder and the query side so both normalise
alike, whatever the corpus. Stemming is Snowball English (Porter2) from PyStemmer, a
maintained C implementation: it conflates the inflections users mix freely ("deploying" /
"deployment" / "deploys"), ranks at least as well as the hand-written Porter (1980) rules this
module once carried, and stems several times faster (figures in ``docs/ranking.md``).
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import string
import threading
import unicodedata
from collections import Counter
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[a-z0-9]+")
_SPLIT_KEY = re.compile(r"[-_.\s/]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: PyStemmer's stemmers are not thread-safe; ``stem`` is memoised, so the lock is rarely taken.
_STEMMER = Stemmer.Stemmer("english")
_STEM_LOCK = threading.Lock()
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: English function words plus request filler ("please", "help me"...). They carry no
#: topic, and leaving them in lets a long question match every long skill a little.
STOP_WORDS = _word_set(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each either etc even ever every few for from further get gets
    getting give go goes going got had hadn has hasn have haven having he her here hers
    herself him himself his how however i id if im in into is isn it its itself ive just
    keep let lets like ll me might mine more most much must mustn my myself need needs no
    nor not now of off often on once only or other others our ours ourselves out over own
    please re really s same shall she should shouldn so some something such sure t than that
    thats the their theirs them themselves then there these they this those though through
    thus to too under until up upon us use used uses using ve very via want wants was wasn
    way we well were weren what whats when where whether which while who whom whose why will
    with within without won would wouldn yes yet you youd your yours yourself yourselves u
    ur pls thanks thank hey hi hello help helps able anyone someone one ones thing things
    stuff kind sort lot lots bit can't don't i'm
    """
)


def fold(text: str) -> str:
    """Lower-case ``text`` and strip accents so "Café" and "cafe" compare equal."""
    text = text.casefold()
    if text.isascii():
        return text
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text))


def words(text: str) -> list[str]:
    """Folded alphanumeric runs of ``text``, stop words included (for phrase positions)."""
    return _WORD.findall(fold(text))


_WORD_CHARS = frozenset(string.ascii_lowercase + string.digits)
#: Bytes to what ``words`` makes of them: letters lower-cased, digits kept, others a space.
_SPACES = bytes(
    ord(chr(c).lower()) if chr(c).lower() in _WORD_CHARS else ord(" ") for c in range(256)
)
#: The same for folded text, where an upper-case letter can only come from a compatibility
#: form ("™" -> "TM") and so is no part of a word.
_FOLDED_SPACES = bytes(
    c if c in b"abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256)
)
_ASCII = bytes(range(128))


def spaced(text: str) -> str:
    """``text`` as ``words`` splits it: ASCII letters and digits lower-cased and every other
    character a space, so each word is where it was, after a leading space (its ``split()``
    is ``words(text)``, made at C speed).

    Folding (case, accents, compatibility forms) is needed only when a character other than
    ASCII could become part of a word ("é" -> "e", "²" -> "2") or vanish (a combining mark
    joins its neighbours): most texts' other characters are dashes, quotes and symbols.
    """
    table = _SPACES
    if not text.isascii():
        others = text.encode("utf-8", "surrogatepass").translate(None, _ASCII)
        if not all(map(_separates, set(others.decode("utf-8", "surrogatepass")))):
            text, table = fold(text), _FOLDED_SPACES
    return " " + text.encode("ascii", "replace").translate(table).decode("ascii")


@functools.lru_cache(maxsize=4096)
def _separates(char: str) -> bool:
    """Whether ``char`` folds to something that only separates words."""
    folded = fold(char)
    return folded != "" and not any(c in _WORD_CHARS for c in folded)


def key_words(key: str) -> list[str]:
    """The words of a skill key or name: ``pdf-to_markdown`` -> ``pdf``, ``to``, ``markdown``."""
    return [w for part in _SPLIT_KEY.split(fold(key)) for w in _WORD.findall(part)]


def identifier_words(name: str) -> list[str]:
    """The words of a programmer's identifier: ``key_words`` after splitting camelCase,
    so ``getHTTPResponse_v2`` -> ``get``, ``http``, ``response``, ``v2``."""
    return key_words(_CAMEL.sub(" ", name))


def is_content(word: str) -> bool:
    """True for a word that can carry topic: not a stop word, a lone letter or a small number."""
    return len(word) > 1 and word not in STOP_WORDS and not (word.isdigit() and len(word) < 3)


#: Whole tokens that name rather than describe: URLs, paths (rooted, relative, home, two or
#: more separators, or a separator and a file extension), ticket and PR ids (``ABC-123``,
#: ``#123``), host:port and bare ports, and versions (``v2.3.1``, ``3.12``, ``1.0.0-rc1``).
_OPAQUE_TOKEN = re.compile(
    r"""
    [a-z][a-z0-9+.-]*://\S* | www\.\S+                      # URL
    | (?:~|\.{1,2})?/\S* | \S*\\\S* | \S*/\S*/\S* | \S+/\S*\.[a-z0-9]{1,5}  # path
    | [A-Z][A-Z0-9]*-[0-9]+ | [A-Za-z]*\#[0-9]+                # ticket or PR id
    | [\w.-]*:[0-9]{2,5}                                    # host:port, :port
    | v?[0-9]+(?:\.[0-9]+)+[\w.+-]*                          # version
    """,
    re.X,
)
#: Characters around a token that are punctuation of the sentence, not of the token.
_TOKEN_EDGES = "\"'`()[]{}<>,;!?*"
_HEX_ID = re.compile(r"[0-9a-f]{7,64}")
#: A year is a date, which describes (a model year, a standard, a period), not a name.
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")


def opaque_tokens(text: str) -> list[tuple[str, ...]]:
    """The tokens of ``text`` that only ever name something, each as its content words (as
    ``words`` folds them): numbers, versions, commit hashes, ticket and PR ids, ports, paths
    and URLs. A request is full of them ("the migration for issue 1234"). A year stays a word
    (a date describes: "Fortran 2008"), and so does a word also written elsewhere in
    ``text`` as an ordinary word.
    """
    found: list[tuple[str, ...]] = []
    plain: set[str] = set()
    for raw in text.split():
        token = raw.strip(_TOKEN_EDGES).rstrip(".:")
        ws = [w for w in words(token) if is_content(w)]
        if _OPAQUE_TOKEN.fullmatch(token):
            found.append(tuple(ws))
            continue
        for w in ws:
            if (w.isdigit() and not _YEAR.fullmatch(w)) or (
                _HEX_ID.fullmatch(w) is not None and not w.isalpha()
            ):
                found.append((w,))
            else:
                plain.add(w)
    groups = (tuple(w for w in g if w not in plain) for g in found)
    return [g for g in groups if g]


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of a folded word; digits and short words pass through unchanged."""
    if len(word) <= 2 or not word.isalpha():
        return word
    with _STEM_LOCK:
        return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` in order (the unit the index counts)."""
    return [stem(w) for w in words(text) if is_content(w)]


def term_counts(text: str) -> Counter[str]:
    """``Counter(terms(text))``, its terms in the order they first occur.

    A body holds a thousand words or more: each is mapped to its term and counted in C
    (``spaced``, a dict lookup, ``Counter``), and only a word never seen before is stemmed.
    """
    out: Counter[str | None] = Counter(map(_TERM_OF.__getitem__, spaced(text).split()))
    out.pop(None, None)
    return out  # type: ignore[return-value]  # None, the one other key, is gone


def content_terms(text: str) -> tuple[tuple[str, ...], list[str]]:
    """The content words of ``text`` in order and the term of each: ``terms(text)`` with the
    words it came from."""
    found = spaced(text).split()
    stems = list(map(_TERM_OF.__getitem__, found))
    keep = list(map(operator.is_not, stems, itertools.repeat(None)))
    return tuple(itertools.compress(found, keep)), list(itertools.compress(stems, keep))  # type: ignore[arg-type]


class _Terms(dict[str, str | None]):
    """word -> its term, or None for a word that is no content; filled on first lookup."""

    def __missing__(self, word: str) -> str | None:
        term = self[word] = stem(word) if is_content(word) else None
        return term


#: Bounded by the vocabulary of the texts seen: a word is stemmed once in a process.
_TERM_OF = _Terms()


def within_one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by at most one insert, delete, substitution or swap."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if i == la:
        return True
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True
        return a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    return a[i:] == b[i + 1 :]


def deletions(word: str) -> set[str]:
    """``word`` and every string one deletion away (the keys of a typo-tolerant lookup)."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}
