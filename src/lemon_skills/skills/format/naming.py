"""Skill keys that are safe to use as directory names.

A key becomes ``<skill dir>/<key>``, so anything that could leave that directory (``..``,
separators, a leading dot, control characters) is refused outright; everything else is folded
into the Agent Skills charset (lowercase letters and digits separated by single hyphens).
"""

from __future__ import annotations

import re
import unicodedata

from lemon_skills.errors import InstallError
from lemon_skills.paths import is_transient_name

MAX_KEY = 64
_INVISIBLE = frozenset(("Cc", "Cf", "Zl", "Zp"))
_SEPARATORS = re.compile(r"[^\w]+|_+")


def unsafe_reason(name: str) -> str | None:
    """Why ``name`` cannot be a directory name under the skill dir, or None."""
    if not name.strip():
        return "it is empty"
    if "/" in name or "\\" in name:
        return "it contains a path separator"
    if ".." in name:
        return "it contains '..'"
    if name.startswith("."):
        return "it starts with a dot"
    if has_invisible(name):
        return "it contains control or invisible characters"
    if is_transient_name(name):
        return "it looks like an install staging directory"
    return None


def has_invisible(text: str) -> bool:
    """True when ``text`` holds a control, format (bidi, zero-width) or line-separator character.

    Such text can forge rows in a listing or lines in the prompt, or read differently than it is.
    """
    if text.isprintable():  # the fast path: one C call answers for nearly every name
        return False
    return any(unicodedata.category(c) in _INVISIBLE for c in text)


def skill_key(name: str) -> str:
    """Turn a skill name into its key: refuse path-like names, fold the rest into the charset.

    ``"PDF Tools"`` becomes ``"pdf-tools"``; ``"../evil"`` is refused.

    Raises:
        InstallError: the name is path-like or has no letters or digits.
    """
    reason = unsafe_reason(name)
    if reason is not None:
        raise InstallError(
            f"refusing skill name {name!r}: {reason}",
            hint="skill names are lowercase letters, digits and hyphens "
            "(pass --name, or name= from Python, to choose one)",
        )
    folded = unicodedata.normalize("NFKC", name).strip().lower()
    key = _SEPARATORS.sub("-", folded).strip("-")
    key = re.sub(r"-{2,}", "-", key)[:MAX_KEY].rstrip("-")
    if not key:
        raise InstallError(f"refusing skill name {name!r}: it has no letters or digits")
    return key
