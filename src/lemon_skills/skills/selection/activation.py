"""How a skill activates: by request, by the files in play (``paths``/``globs``), always, or
only on explicit request.

Claude Code's ``paths:`` and Cursor's ``globs:`` are gitignore-style patterns relative to the
project (``selection.globs``). The matching is pure: the files in play arrive as paths and are
never read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from lemon_skills.paths import git_root
from lemon_skills.skills.selection.globs import MAX_PATTERNS, matches_path

if TYPE_CHECKING:
    from lemon_skills.skills.format.model import Entry

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
    live = [p for p in patterns if p.strip()][:MAX_PATTERNS]
    for f in files:
        for rel in _relative(f, roots):
            if any(matches_path(p, rel) for p in live):
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
