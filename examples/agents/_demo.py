"""The throwaway project the framework examples run in when given none: one skill."""

from __future__ import annotations

import tempfile
from pathlib import Path

REQUEST = "write the release notes for version 2.1"
SKILL = """---
name: release-notes
description: Write release notes from the changelog, grouped by breaking changes, features and fixes.
---

# Release notes

Start with breaking changes, then features, then fixes; one line per change.
"""


def demo_args(argv: list[str]) -> tuple[Path, bool]:
    """``(PROJECT, --mcp given)`` from the command line; a demo project when none is named."""
    args = [a for a in argv if a != "--mcp"]
    if args:
        return Path(args[0]), "--mcp" in argv
    root = Path(tempfile.mkdtemp(prefix="lemon-demo-"))
    (root / ".git").mkdir()
    skill = root / ".lemon" / "skill" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL, encoding="utf-8")
    return root, "--mcp" in argv
