"""Skills as search documents: a skill's fields, their weights, and the index of a skill set.

Each skill is split into fields (key and name, keywords and tags, description, body
headings, body prose) and ranked by the corpus-neutral ``lemon_skills.search``; this module
only says how an ``Entry`` becomes a ``search.Document`` and which field weighs what.
"""

from __future__ import annotations

import hashlib
import marshal
import re
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from lemon_skills import search
from lemon_skills.search import tokens
from lemon_skills.search.index import BACKGROUND, FORMAT, Analysed
from lemon_skills.skills.model import Entry

#: Body text past this many characters is not indexed: long references state their topic
#: early, and the cap bounds the build time of huge skills.
BODY_CHARS = 20_000
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.M)

Weights = search.Weights
#: Field weights and length normalisation for skills (chosen on labelled queries).
DEFAULT_WEIGHTS = search.Weights(
    field_weight={"name": 3.0, "keywords": 2.5, "description": 2.0, "headings": 1.0, "body": 0.1},
    field_b={"name": 0.3, "keywords": 0.3, "description": 0.5, "headings": 0.6, "body": 0.75},
)


@dataclass(frozen=True, slots=True)
class Index:
    """The search index of a fixed list of skills (document ``i`` is ``entries[i]``)."""

    entries: tuple[Entry, ...]
    core: search.Index

    @property
    def weights(self) -> search.Weights:
        """The constants the index was built and is ranked with."""
        return self.core.weights


def entry_fields(entry: Entry) -> dict[str, str]:
    """The text of each field of ``entry``."""
    m = entry.manifest
    body = entry.body[:BODY_CHARS]
    # An MCP skill's key carries its server ("srv:name"): the server is no word of the skill,
    # so a served skill ranks exactly as the same skill on disk.
    key = entry.key if entry.server is None else entry.key.partition(":")[2]
    name = " ".join(dict.fromkeys([*tokens.key_words(key), *tokens.key_words(entry.name)]))
    extra = [*m.keywords, *m.tags, *([m.category] if m.category else [])]
    return {
        "name": name,
        "keywords": " ".join(extra),
        "description": entry.description,
        "headings": "\n".join(_HEADING.findall(_FENCE.sub("", body))),
        "body": body,
    }


class _Fields(Mapping[str, str]):
    """``entry_fields`` computed on first read: a skill tokenised before is never re-read."""

    def __init__(self, entry: Entry) -> None:
        self._entry = entry
        self._fields: dict[str, str] | None = None

    def _get(self) -> dict[str, str]:
        if self._fields is None:
            self._fields = entry_fields(self._entry)
        return self._fields

    def __getitem__(self, name: str) -> str:
        return self._get()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def document(entry: Entry) -> search.Document:
    """``entry`` as a search document: named by key and name, project skills win ties."""
    return search.Document(
        entry.key,
        _Fields(entry),
        names=(entry.key, entry.name),
        priority=1 if entry.source == "project" else 0,
        stamp=_stamp(entry),
    )


#: Tokenised skills by content stamp, so a rebuild after one edit re-reads one skill: the
#: corpus-wide steps (compounds, lengths, IDF) are cheap next to stemming every body.
_ANALYSED: dict[Hashable, Analysed] = {}


def _stamp(entry: Entry) -> tuple[object, ...]:
    """What identifies one version of a skill: the stat signature changes with every edit and
    costs no read; entries built in memory (no file) fall back to their text."""
    if entry.file_sig is not None:
        return (entry.key, entry.source, entry.real_path, entry.file_sig)
    digest = hashlib.sha256(f"{entry.manifest!r}{entry.body}".encode()).hexdigest()
    return (entry.key, entry.source, entry.name, entry.description, digest)


def build_index(entries: Sequence[Entry], *, weights: Weights = DEFAULT_WEIGHTS) -> Index:
    """Tokenise every skill once in its life and precompute each (term, skill) weight."""
    docs = [document(e) for e in entries]
    return Index(tuple(entries), search.build_index(docs, weights, memo=_ANALYSED))


# --- byte form (for the on-disk cache) -------------------------------------------------------


def cache_key(entries: Sequence[Entry], weights: Weights = DEFAULT_WEIGHTS) -> str:
    """A digest of everything the index depends on: format, weights and each skill's bytes."""
    h = hashlib.sha256(f"{FORMAT}:{weights.fingerprint()}:{BODY_CHARS}:{BACKGROUND}".encode())
    for e in entries:
        h.update(f"\0{_stamp(e)!r}".encode())
    return h.hexdigest()[:32]


def dumps(index: Index) -> bytes:
    """The index, and each skill tokenised, as bytes for ``loads`` and ``seed`` (entries are
    not stored: the caller has them)."""
    stamps = [_stamp(e) for e in index.entries]
    tokenised = search.dump_analysed((s, _ANALYSED[s]) for s in stamps if s in _ANALYSED)
    return marshal.dumps((search.dumps(index.core), tokenised))


def loads(data: bytes, entries: Sequence[Entry], *, weights: Weights = DEFAULT_WEIGHTS) -> Index:
    """Rebuild an index from ``dumps`` output for the same ``entries``.

    Raises:
        ValueError: the bytes are not an index of this format, machine or skill list.
    """
    core = search.loads(_parts(data)[0], weights)
    if core.keys != tuple(e.key for e in entries):
        raise ValueError("ranking index of another skill list")
    return Index(tuple(entries), core)


def untokenised(entries: Sequence[Entry]) -> int:
    """How many of ``entries`` this process has not tokenised yet (in any earlier build)."""
    return sum(1 for e in entries if _stamp(e) not in _ANALYSED)


def seed(data: bytes, entries: Sequence[Entry]) -> float:
    """Take the tokenised skills of ``dumps`` output that ``entries`` still have, so the next
    ``build_index`` re-reads only the others. Returns the share of the stored skills that
    ``entries`` still have at the same place (edited or not).

    Raises:
        ValueError: the bytes are not ``dumps`` output of this format.
    """
    stored = search.load_analysed(_parts(data)[1])
    current = {_stamp(e) for e in entries}
    _ANALYSED.update((s, a) for s, a in stored.items() if s in current)
    places = {s[:3] for s in current}
    kept = sum(1 for s in stored if isinstance(s, tuple) and s[:3] in places)
    return kept / len(stored) if stored else 0.0


def _parts(data: bytes) -> tuple[bytes, bytes]:
    try:
        core, tokenised = marshal.loads(data)  # noqa: S302 - our own cache file
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError("not a ranking index") from exc
    if not isinstance(core, bytes) or not isinstance(tokenised, bytes):
        raise ValueError("not a ranking index")
    return core, tokenised
