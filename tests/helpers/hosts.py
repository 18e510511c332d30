"""Plugin bundles laid out as Claude Code ships them, for the host discovery tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.skills import write_skill


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def claude_plugin(root: Path, name: str = "commit-tools") -> Path:
    """A Claude Code plugin: manifest in .claude-plugin/, skills/, commands/, hooks/."""
    write_json(
        root / ".claude-plugin" / "plugin.json",
        {
            "name": name,
            "version": "1.2.0",
            "description": "Commit helpers",
            "author": {"name": "Dev Team", "email": "dev@example.com"},
            "license": "MIT",
        },
    )
    write_skill(root / "skills", "conventional-commits", description="Write conventional commits.")
    (root / "commands").mkdir(exist_ok=True)
    (root / "commands" / "commit.md").write_text("---\ndescription: Commit\n---\nCommit it.\n")
    write_json(root / "hooks" / "hooks.json", {"hooks": {}})
    return root
