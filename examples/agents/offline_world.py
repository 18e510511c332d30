"""The throwaway world both examples run in: a project with one skill, and lemon's bundled
fixture MCP server in a global mcp.json of a temporary agent dir, with ``approve: destructive``
(its unannotated ``echo`` tool is held for a person)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def world() -> Path:
    """A project with a skill, and the fixture server in a throwaway global mcp.json."""
    root = Path(tempfile.mkdtemp())
    os.environ["LEMON_AGENT_DIR"] = str(root / "agent")
    skill = root / "project" / ".lemon" / "skill" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\n\n"
        "## Steps\n\nGroup changes by feature, fix and breaking change.\n"
    )
    server = {"command": sys.executable, "args": ["-m", "lemon_skills.selftest.fixtures.server"]}
    config = {"mcpServers": {"fx": server | {"approve": "destructive"}}}
    (root / "agent").mkdir()
    (root / "agent" / "mcp.json").write_text(json.dumps(config))
    return root / "project"
