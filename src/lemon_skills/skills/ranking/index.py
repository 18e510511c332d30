"""Skills as search documents: a skill's fields, their weights, and the index of a skill set.

Each skill is split into fields (key and name, keywords and tags, description, body
headings, the body's "When to use" sections, body prose) and ranked by the corpus-neutral
``lemon_skills.search``; this module only says how an ``Entry`` becomes a ``search.Document``
and which field weighs what.
"""

from __future__ import annotations

import hashlib
import mmap
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from lemon_skills import search
from lemon_skills.search import focus, tokens
from lemon_skills.search import index as search_index
from lemon_skills.search.schema import BACKGROUND, FORMAT
from lemon_skills.skills.model import Entry

#: Body text past this many characters is not indexed: long references state their topic
#: early, and the cap bounds the build time of huge skills.
BODY_CHARS = 20_000
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.M)
_LEVEL = re.compile(r"^ {0,3}(#{1,6})[ \t]", re.M)
#: Headings of the sections that say when a skill applies (the SKILL.md convention: "When to
#: use this skill", "Use this skill when", "Use cases", "Triggers"); "Do not use ..." is not one.
_USAGE = re.compile(
    r"^ {0,3}(#{1,6})[ \t]+(when to (use|activate|apply)\b|use (this skill )?when\b"
    r"|(common |related )?use cases\b|(proactive )?triggers?\b)[^\n]*$",
    re.I | re.M,
)

Weights = search.Weights
#: Field weights and length normalisation for skills (chosen on labelled queries).
DEFAULT_WEIGHTS = search.Weights(
    field_weight={
        "name": 3.0,
        "keywords": 2.5,
        "description": 2.0,
        "headings": 1.0,
        "usage": 0.3,
        "body": 0.1,
    },
    field_b={
        "name": 0.3,
        "keywords": 0.3,
        "description": 0.5,
        "headings": 0.6,
        "usage": 0.6,
        "body": 0.75,
    },
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
    prose = _FENCE.sub("", body)
    return {
        "name": name,
        "keywords": " ".join(extra),
        "description": entry.description,
        "headings": "\n".join(_HEADING.findall(prose)),
        "usage": usage_sections(prose),
        "body": body,
    }


def usage_sections(body: str) -> str:
    """The text of ``body``'s sections that say when the skill applies, each up to the next
    heading of the same or a higher level (``body`` without code fences)."""
    out = []
    for m in _USAGE.finditer(body):
        level = len(m.group(1))
        end = next(
            (h.start() for h in _LEVEL.finditer(body, m.end()) if len(h.group(1)) <= level),
            len(body),
        )
        out.append(body[m.end() : end].strip())
    return "\n".join(out)


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


def document(entry: Entry, stamp: tuple[object, ...] | None = None) -> search.Document:
    """``entry`` as a search document: named by key and name, project skills win ties
    (``stamp``: ``entry``'s, when already known)."""
    return search.Document(
        entry.key,
        _Fields(entry),
        names=(entry.key, entry.name),
        priority=_priority(entry),
        stamp=_stamp(entry) if stamp is None else stamp,
    )


def _priority(entry: Entry) -> int:
    return 1 if entry.source == "project" else 0


def _stamp(entry: Entry) -> tuple[object, ...]:
    """What identifies one version of a skill: the stat signature changes with every edit and
    costs no read; entries built in memory (no file) fall back to their text."""
    if entry.file_sig is not None:
        return (entry.key, entry.source, entry.real_path, entry.file_sig)
    digest = hashlib.sha256(f"{entry.manifest!r}{entry.body}".encode()).hexdigest()
    return (entry.key, entry.source, entry.name, entry.description, digest)


def build_index(entries: Sequence[Entry], *, weights: Weights = DEFAULT_WEIGHTS) -> Index:
    """Tokenise every skill and count each term in each field."""
    docs = [document(e) for e in entries]
    return Index(tuple(entries), search.build_index(docs, weights))


def focused_index(
    entries: Sequence[Entry], query: str, *, weights: Weights = DEFAULT_WEIGHTS
) -> Index:
    """An index of ``entries`` that counts only the terms ``query`` can reach
    (``search.focus``): a first answer for a tree whose full index was never built, ranking as
    the full index would but for the bodies' length normalisation."""
    docs = [document(e, stamp=()) for e in entries]
    return Index(tuple(entries), focus.focused_index(docs, weights, query))


def update_index(old: search.Index, entries: Sequence[Entry], *, merge: bool = True) -> Index:
    """The index of ``entries`` made from ``old`` (an index of an earlier state of these
    skills), re-reading only the skills added or edited since: equal to
    ``build_index(entries)`` (``merge``: see ``search.index.update_index``)."""
    stamps = [_stamp(e) for e in entries]
    known = search_index.stamps(old)
    if known == tuple(stamps):
        return Index(tuple(entries), old)
    # Fields are read on first use: a skill the index has by its stamp is never read.
    docs = [document(e, s) for e, s in zip(entries, stamps, strict=True)]
    return Index(tuple(entries), search_index.update_index(old, docs, merge=merge))


# --- byte form (for the on-disk cache) -------------------------------------------------------


def tree_key(entries: Sequence[Entry], weights: Weights = DEFAULT_WEIGHTS) -> str:
    """A digest of where the skills come from and of what the index depends on besides their
    text (format, weights): one edit keeps it, so the cached index is updated, not missed."""
    h = hashlib.sha256(f"{FORMAT}:{weights.fingerprint()}:{BODY_CHARS}:{BACKGROUND}".encode())
    for place in sorted({f"{e.source}\0{e.search_dir}" for e in entries}):
        h.update(f"\0{place}".encode())
    return h.hexdigest()[:32]


def dumps(index: Index) -> bytes:
    """The index as bytes for ``loads`` (entries are not stored: the caller has them)."""
    return search.dumps(index.core)


def loads(
    data: bytes | memoryview | mmap.mmap,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
    base: bytes | memoryview | mmap.mmap | None = None,
    base_tag: str | None = None,
) -> search.Index:
    """The index ``dumps`` stored, for ``update_index`` with the current skills (a delta
    needs the ``base`` it was stored over and its tag, see ``search.codec``).

    Raises:
        ValueError: the bytes are not an index of this format, machine or weights.
    """
    return search.loads(data, weights, base=base, base_tag=base_tag)
