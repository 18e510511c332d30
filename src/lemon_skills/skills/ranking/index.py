"""Skills as search documents: a skill's fields, their weights, and the index of a skill set.

Each skill is split into fields (key and name, keywords and tags, description, body
headings, the body's "When to use" sections, body prose) and ranked by the corpus-neutral
``lemon_skills.search``; this module only says how an ``Entry`` becomes a ``search.Document``
and which field weighs what.
"""

from __future__ import annotations

import hashlib
import itertools
import mmap
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from lemon_skills import search
from lemon_skills._gc import gc_paused
from lemon_skills.search import focus, tokens
from lemon_skills.search import index as search_index
from lemon_skills.search.schema import BACKGROUND, FORMAT
from lemon_skills.skills.format.model import Entry

#: Body text past this many characters is not indexed: long references state their topic
#: early, and the cap bounds the build time of huge skills.
BODY_CHARS = 20_000
#: A heading title, after the newline that precedes it in the joined titles, that names a
#: section saying when the skill applies (the SKILL.md convention: "When to use this skill",
#: "Use this skill when", "Use cases", "Triggers"); "Do not use ..." is not one. The lookahead
#: lets most titles fail on their first letter.
_USAGE = re.compile(
    r"\n(?=[wucrpt])(when to (use|activate|apply)\b|use (this skill )?when\b"
    r"|(common |related )?use cases\b|(proactive )?triggers?\b)",
    re.I,
)
#: A heading line: where it starts, its level (1-6) and its title (``None`` for none).
_Heading = tuple[int, int, str | None]

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
    body = entry.read_body()[:BODY_CHARS]
    # An MCP skill's key carries its server ("srv:name"): the server is no word of the skill,
    # so a served skill ranks exactly as the same skill on disk.
    key = entry.key if entry.server is None else entry.key.partition(":")[2]
    words = tokens.key_words(key)
    if entry.name != key:  # most skills are named as their folder: one reading of the words
        words += tokens.key_words(entry.name)
    name = " ".join(dict.fromkeys(words))
    extra = [*m.keywords, *m.tags, *([m.category] if m.category else [])]
    prose = _without_fences(body)
    lines = _heading_lines(prose)
    titles = "\n".join([t for _, _, t in lines if t is not None])
    return {
        "name": name,
        "keywords": " ".join(extra),
        "description": entry.description,
        "headings": titles,
        "usage": _usage(prose, lines, titles),
        "body": body,
    }


# The body is scanned with str.find for the few characters that can open a fence or a
# heading: a multi-line regex anchored at line starts would try every position of every body,
# at three times the cost, and these fields are computed for each skill a new index reads.


def usage_sections(body: str) -> str:
    """The text of ``body``'s sections that say when the skill applies, each up to the next
    heading of the same or a higher level (``body`` without code fences)."""
    lines = _heading_lines(body)
    return _usage(body, lines, "\n".join([t for _, _, t in lines if t is not None]))


def _without_fences(body: str) -> str:
    """``body`` without its fenced code blocks.

    A block starts at a line that opens, after at most 3 spaces, with ```` ``` ```` or
    ``~~~`` and ends right after the same fence at the start (at most 3 spaces in) of the
    first later line that has it; the rest of that line stays. A fence never closed removes
    nothing, and a fence of the other kind inside a block is code.
    """
    ticks, tildes = _fence_marks(body, "`"), _fence_marks(body, "~")
    if ticks and tildes:
        blocks = _blocks(sorted([(i, s, "`") for i, s in ticks] + [(i, s, "~") for i, s in tildes]))
    else:
        # One kind of fence (the usual case): each opening line closes at the next.
        marks = ticks or tildes
        blocks = [(o[1], c[0] + 3) for o, c in zip(marks[::2], marks[1::2], strict=False)]
    if not blocks:
        return body
    pieces, kept = [], 0
    for start, end in blocks:
        pieces.append(body[kept:start])
        kept = end
    pieces.append(body[kept:])
    return "".join(pieces)


def _blocks(marks: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(start, end) of each fenced block, given each fence line's (position, line start,
    fence char) in order."""
    out, k = [], 0
    while k < len(marks):
        _, start, char = marks[k]
        close = next((j for j in range(k + 1, len(marks)) if marks[j][2] == char), None)
        if close is not None:
            out.append((start, marks[close][0] + 3))
            k = close
        k += 1
    return out


def _fence_marks(body: str, char: str) -> list[tuple[int, int]]:
    """(position, line start) of each line of ``body`` that opens with a fence of ``char``."""
    out = []
    find = body.find
    fence = char * 3
    i = find(char)
    while i >= 0:
        if body.startswith(fence, i):
            start = i if i == 0 or body[i - 1] == "\n" else _line_start(body, i)
            if start >= 0:
                out.append((i, start))
        # A later fence char on this line follows a non-space: it opens nothing.
        i = find("\n", i)
        i = -1 if i < 0 else find(char, i)
    return out


def _line_start(text: str, i: int) -> int:
    """Where the line of ``text[i]`` starts when at most 3 spaces precede ``i`` on it (the
    indent that keeps a fence or a heading a block marker), else -1."""
    start = text.rfind("\n", max(i - 4, 0), i) + 1
    if start == 0 and i > 3:
        return -1
    return start if text.count(" ", start, i) == i - start else -1


def _heading_lines(prose: str) -> list[_Heading]:
    """The heading lines of ``prose``, in order.

    A heading line opens, after at most 3 spaces, with 1-6 ``#`` and a space or tab. Its
    title is the rest of the line from the first character that is neither; when only such
    whitespace follows the ``#``, the last of two or more is the title, and a lone one leaves
    none: that line still ends a section but names none.
    """
    out = []
    find = prose.find
    i = find("#")
    while i >= 0:
        eol = find("\n", i)
        if eol < 0:
            eol = len(prose)
        start = i if i == 0 or prose[i - 1] == "\n" else _line_start(prose, i)
        if start >= 0:
            rest = prose[i:eol].lstrip("#")
            level = eol - i - len(rest)
            if level <= 6 and rest[:1] in (" ", "\t"):
                title = rest.lstrip(" \t") or (rest[-1] if len(rest) > 1 else None)
                out.append((start, level, title))
        # A later "#" on this line follows a non-space: it starts no heading.
        i = find("#", eol)
    return out


def _usage(prose: str, lines: list[_Heading], titles: str) -> str:
    """The usage sections of ``prose``, whose heading ``lines`` and ``titles`` (those lines'
    titles joined by newlines) are known."""
    if not lines:
        return ""
    if titles.count("\n") + 1 != len(lines):
        # A heading without a title: an empty line keeps the k-th title the k-th heading's.
        titles = "\n".join([t or "" for _, _, t in lines])
    # One search of the joined titles costs less than a regex call per heading.
    text = "\n" + titles
    out, k, seen = [], -1, 0
    for m in _USAGE.finditer(text):
        k, seen = k + text.count("\n", seen, m.start() + 1), m.start() + 1
        start, level, _ = lines[k]
        eol = prose.find("\n", start)
        later = itertools.islice(lines, k + 1, None)
        end = next((s for s, lv, _ in later if lv <= level), len(prose))
        out.append(prose[len(prose) if eol < 0 else eol : end].strip())
    return "\n".join(out)


class _Fields(Mapping[str, str]):
    """``entry_fields`` computed on first read: a skill tokenised before is never re-read.
    The body is not kept here (the entry keeps it, unless it is lean)."""

    def __init__(self, entry: Entry) -> None:
        self._entry = entry
        self._fields: dict[str, str] | None = None

    def _get(self) -> dict[str, str]:
        if self._fields is None:
            fields = entry_fields(self._entry)
            del fields["body"]
            self._fields = fields
        return self._fields

    def __getitem__(self, name: str) -> str:
        if name == "body":
            return self._entry.read_body()[:BODY_CHARS]
        return self._get()[name]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._get(), "body"])

    def __len__(self) -> int:
        return len(self._get()) + 1


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
    if (version := entry.remote_version()) is not None:
        # The listed digest of a remote skill's SKILL.md: ranking a saved listing fetches
        # no body it indexed before.
        return (entry.key, entry.source, entry.name, entry.description, version)
    digest = hashlib.sha256(f"{entry.manifest!r}{entry.body}".encode()).hexdigest()
    return (entry.key, entry.source, entry.name, entry.description, digest)


def build_index(entries: Sequence[Entry], *, weights: Weights = DEFAULT_WEIGHTS) -> Index:
    """Tokenise every skill and count each term in each field."""
    docs = [document(e) for e in entries]
    # Each skill's counters live until the end and form no cycle: collections during the
    # build would walk them again and again (a fifth of a build of 10,000 skills).
    with gc_paused():
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
