"""How a skill activates: by request, by the files in play (``paths``/``globs``), always, or
only on explicit request; and the glob matching behind it.

Claude Code's ``paths:`` and Cursor's ``globs:`` are gitignore-style patterns relative to the
project: a pattern without a slash matches a file name at any depth, ``**`` spans directories,
``{a,b}`` gives alternatives, and a pattern naming a directory covers everything under it.
The matching is pure: the files in play arrive as paths and are never read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from lemon_skills.paths import git_root

if TYPE_CHECKING:
    from lemon_skills.skills.model import Entry

Activation = Literal["always", "files", "paths", "request", "manual"]


def activation(entry: Entry) -> Activation:
    """``always``: injected on every request (Cursor ``alwaysApply``, ``.cursorrules``);
    ``files``: injected when a file in play matches (Cursor auto-attached rules);
    ``paths``: ranked by the request, offered only when a file in play matches;
    ``request``: ranked by the request; ``manual``: only when asked for by key."""
    if entry.flag("always_apply"):
        return "always"
    if entry.flag("disable_model_invocation"):
        return "manual"
    if entry.paths:
        return "files" if entry.flag("attach") else "paths"
    return "request"


def describe(entry: Entry) -> str:
    """One sentence for ``lemon skill show``: when this skill reaches the prompt."""
    globs = ", ".join(entry.paths)
    return {
        "always": "always injected (within the prompt budget)",
        "files": f"injected when a file in play matches {globs}",
        "paths": f"offered for relevant requests when a file in play matches {globs}",
        "request": "offered when relevant to the request",
        "manual": "only when asked for by key (never offered automatically)",
    }[activation(entry)]


@dataclass(frozen=True, slots=True)
class InPlay:
    """The files an agent is working on, and the directories their globs are relative to."""

    files: tuple[Path, ...]
    roots: tuple[Path, ...]

    def matches(self, entry: Entry) -> bool:
        """True when a file in play matches one of ``entry``'s globs."""
        roots = self.roots
        if entry.bundle is not None:
            roots = (Path(entry.bundle.root), *roots)
        return matches(entry.paths, self.files, roots)

    def admits(self, entry: Entry) -> bool:
        """False for a path-scoped skill no file in play matches."""
        return not entry.paths or self.matches(entry)


def in_play(files: Iterable[str | os.PathLike[str]] | None, *, cwd: Path) -> InPlay:
    """The files in play (relative ones taken from ``cwd``), matched relative to ``cwd`` and to
    the git root above it."""
    paths = tuple(Path(os.path.normpath(cwd / Path(f))) for f in files or ())
    root = git_root(cwd) if paths else None
    return InPlay(paths, (cwd,) if root is None or root == cwd else (cwd, root))


def matches(patterns: Sequence[str], files: Sequence[Path], roots: Sequence[Path]) -> bool:
    """True when any file, taken relative to any of ``roots``, matches any pattern."""
    if not patterns or not files:
        return False
    compiled = [_compile(p) for p in patterns if p.strip()]
    for f in files:
        for rel in _relative(f, roots):
            if any(rx.fullmatch(rel) for rx in compiled):
                return True
    return False


def _relative(path: Path, roots: Sequence[Path]) -> list[str]:
    out = []
    for root in roots:
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel != "." and rel not in out:
            out.append(rel)
    return out


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    p = pattern.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    anchored = "/" in p.rstrip("/")
    p = p.strip("/")
    body = _translate(p)
    # A directory pattern covers what is under it; a bare name matches at any depth.
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"{prefix}{body}(?:/.*)?", re.S)


def _translate(p: str) -> str:
    out: list[str] = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif p.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := p.find("]", i + 2)) > 0:
            inner = p[i + 1 : end]
            neg = inner[:1] in ("!", "^")
            inner = re.escape(inner[1:] if neg else inner).replace("\\-", "-")
            # Like ``*`` and ``?``, a bracket never matches the separator (gitignore, fnmatch).
            out.append(f"[^/{inner}]" if neg else f"[{inner}]")
            i = end + 1
        elif c == "{" and (end := _closing_brace(p, i)) > 0:
            alts = _split_alternatives(p[i + 1 : end])
            out.append("(?:" + "|".join(_translate(a) for a in alts) + ")")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


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
