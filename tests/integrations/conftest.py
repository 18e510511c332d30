"""A 362-tool MCP server configured in the global mcp.json, and a skill the requests name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers.skills import write_skill
from tests.integrations.servers import big

SERVER = Path(big.__file__)
DESTRUCTIVE = "mcp_big_erase_records"
FOUND = "mcp_big_send_invoice"
REQUEST = "chase the overdue payments of our clients"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """The file the server's destructive tool writes a line to each time it runs."""
    return tmp_path / "erased.txt"


@pytest.fixture
def big_server(agent_dir: Path, marker: Path) -> Path:
    """Configure the server globally, approving destructive tools; returns the marker."""
    entry = {
        "command": sys.executable,
        "args": [str(SERVER), str(marker)],
        "approve": "destructive",
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"big": entry}}), "utf-8")
    return marker


@pytest.fixture
def invoice_skill(project_skills: Path) -> Path:
    """A project skill about the request."""
    return write_skill(
        project_skills,
        "invoice-chaser",
        description="Chase overdue payments: remind clients politely and record replies.",
        body="## Usage\n\nSend a reminder, then a second one after a week.\n",
    )
