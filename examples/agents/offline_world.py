"""The demo project of ``_demo`` plus, in a throwaway agent dir, lemon's bundled fixture MCP
server with ``approve: destructive``: its unannotated ``echo`` tool is held for a person."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from _demo import demo_args


def world() -> Path:
    """The demo project; the fixture server configured in a temporary global mcp.json."""
    project, _ = demo_args([])
    agent = Path(tempfile.mkdtemp(prefix="lemon-agent-"))
    os.environ["LEMON_AGENT_DIR"] = str(agent)
    server = {"command": sys.executable, "args": ["-m", "lemon_skills.selftest.fixtures.server"]}
    config = {"mcpServers": {"fx": server | {"approve": "destructive"}}}
    (agent / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    return project
