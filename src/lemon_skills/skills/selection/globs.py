"""Gitignore-style globs (Claude Code ``paths:``, Cursor ``globs:``) matched without backtracking.

A pattern without a slash matches a file name at any depth, ``**`` as a whole segment spans
directories, ``{a,b}`` gives alternatives, and a pattern naming a directory covers everything
under it. ``**`` inside a segment is a plain ``*`` (as in gitignore).

A pattern comes from a skill anyone can write, and it is matched on every prompt: a regular
expression built from it can backtrack for minutes (twelve ``**/`` in a row). So a pattern is
split into segments, runs of ``**`` collapse into one, and both levels (segments of a path,
characters of a segment) are matched by the greedy star algorithm, which never revisits more
than the last star: time bounded by pattern length times path length. Brace expansion is
capped, so one pattern cannot grow into millions of alternatives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, TypeVar

#: Alternatives one pattern may expand to; a pattern with more matches nothing.
MAX_ALTERNATIVES: Final = 64
#: Characters of a pattern that are read; a longer pattern matches nothing.
MAX_PATTERN_CHARS: Final = 1024
#: Patterns of one skill that are tried; the rest are ignored (one skill, a few ms at most).
MAX_PATTERNS: Final = 64

_STAR: Final = "*"
_ANY: Final = "?"


@dataclass(frozen=True, slots=True)
class _Class:
    """A bracket expression: ``[abc]``, ``[a-z]``, ``[!x]``; never matches ``/``."""

    negated: bool
    chars: str
    ranges: tuple[tuple[str, str], ...]

    def admits(self, c: str) -> bool:
        hit = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges)
        return hit != self.negated


_Item = str | _Class  # a literal character, _STAR, _ANY (as tokens) or a class
_Segment = tuple[tuple[bool, _Item], ...]  # (is_wildcard, item)
_GLOBSTAR: Final = None
_Part = _Segment | None
_P = TypeVar("_P")
_I = TypeVar("_I")


def matches_path(pattern: str, rel: str) -> bool:
    """True when ``rel`` (a POSIX path relative to the pattern's base) matches ``pattern``."""
    names = tuple(rel.split("/"))
    return any(_match_parts(parts, names) for parts in _compile(pattern))


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> tuple[tuple[_Part, ...], ...]:
    p = pattern.strip().replace("\\", "/")
    if len(p) > MAX_PATTERN_CHARS:
        return ()
    while p.startswith("./"):
        p = p[2:]
    anchored = "/" in p.rstrip("/")
    alternatives = _expand(p.strip("/"))
    if alternatives is None:
        return ()
    out = []
    for alt in alternatives:
        parts: list[_Part] = [] if anchored else [_GLOBSTAR]
        segs = [seg for seg in alt.split("/") if seg]
        parts.extend(
            _GLOBSTAR if len(seg) >= 2 and not seg.strip("*") else _segment(seg) for seg in segs
        )
        if len(segs) > 1 and parts[-1] is _GLOBSTAR:
            parts[-1:] = [_segment("*"), _GLOBSTAR]  # ``dir/**`` is what is inside ``dir``
        else:
            parts.append(_GLOBSTAR)  # a directory pattern covers what is under it
        out.append(_collapse(parts))
    return tuple(out)


def _collapse(parts: list[_Part]) -> tuple[_Part, ...]:
    out: list[_Part] = []
    for part in parts:
        if part is _GLOBSTAR and out and out[-1] is _GLOBSTAR:
            continue
        out.append(part)
    return tuple(out)


def _segment(seg: str) -> _Segment:
    items: list[tuple[bool, _Item]] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            if not (items and items[-1] == (True, _STAR)):
                items.append((True, _STAR))
            i += 1
        elif c == "?":
            items.append((True, _ANY))
            i += 1
        elif c == "[" and (end := seg.find("]", i + 2)) > 0:
            items.append((True, _bracket(seg[i + 1 : end])))
            i = end + 1
        else:
            items.append((False, c))
            i += 1
    return tuple(items)


def _bracket(inner: str) -> _Class:
    negated = inner[:1] in ("!", "^")
    body = inner[1:] if negated else inner
    chars: list[str] = []
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            ranges.append((body[i], body[i + 2]))
            i += 3
        else:
            chars.append(body[i])
            i += 1
    return _Class(negated, "".join(chars).replace("/", ""), tuple(ranges))


def _char_matches(item: tuple[bool, _Item], c: str) -> bool:
    wild, what = item
    if not wild:
        return what == c
    if what == _ANY:
        return True
    return isinstance(what, _Class) and c != "/" and what.admits(c)


def _segment_matches(seg: _Segment, name: str) -> bool:
    """One name against one segment pattern, ``*`` as the star."""
    return _greedy(seg, name, lambda item: item == (True, _STAR), _char_matches)


def _match_parts(parts: Sequence[_Part], names: Sequence[str]) -> bool:
    """A path's names against the segments, ``**`` as the star."""
    return _greedy(
        parts,
        names,
        lambda part: part is _GLOBSTAR,
        lambda part, name: part is not None and _segment_matches(part, name),
    )


def _greedy(
    pattern: Sequence[_P],
    items: Sequence[_I],
    is_star: Callable[[_P], bool],
    fits: Callable[[_P, _I], bool],
) -> bool:
    """Greedy star matching: on a mismatch only the last star takes one more item, so the
    work is at most ``len(pattern) * len(items)`` steps."""
    p = s = 0
    star_p, star_s = -1, 0
    while s < len(items):
        if p < len(pattern) and is_star(pattern[p]):
            star_p, star_s = p, s
            p += 1
        elif p < len(pattern) and fits(pattern[p], items[s]):
            p += 1
            s += 1
        elif star_p >= 0:
            p = star_p + 1
            star_s += 1
            s = star_s
        else:
            return False
    while p < len(pattern) and is_star(pattern[p]):
        p += 1
    return p == len(pattern)


def _expand(p: str) -> list[str] | None:
    """Every alternative of the braces in ``p``; None past ``MAX_ALTERNATIVES``."""
    start = p.find("{")
    if start >= 0:
        end = _closing_brace(p, start)
        if end < 0:
            return [p]  # an unclosed brace is a literal character
        out: list[str] = []
        for alt in _split_alternatives(p[start + 1 : end]):
            expanded = _expand(p[:start] + alt + p[end + 1 :])
            if expanded is None or len(out) + len(expanded) > MAX_ALTERNATIVES:
                return None
            out.extend(expanded)
        return out
    return [p]


def _closing_brace(p: str, start: int) -> int:
    depth = 0
    for j in range(start, len(p)):
        if p[j] == "{":
            depth += 1
        elif p[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _split_alternatives(inner: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += (ch == "{") - (ch == "}")
        cur.append(ch)
    parts.append("".join(cur))
    return parts
