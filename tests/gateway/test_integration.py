"""The gateway in front of real servers from PyPI: mcp-server-time and mcp-server-git
(``pip install mcp-server-time mcp-server-git``), called with the SDK's own client."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.gateway.conftest import gateway, text
from tests.helpers.git import git

pytestmark = pytest.mark.integration


def _installed(script: str) -> str:
    found = shutil.which(script) or str(Path(sys.executable).parent / script)
    assert Path(found).is_file(), f"{script} not installed (pip install {script})"
    return found


def test_time_and_git_through_the_gateway(project: Path, servers: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "new.txt").write_text("hello\n")
    servers(
        {"name": "time", "command": _installed("mcp-server-time")},
        {"name": "git", "command": _installed("mcp-server-git"), "args": ["-r", str(repo)]},
    )

    async def main() -> None:
        async with gateway(project, "--tools", "search") as s:
            found = await s.call_tool("tool_search", {"query": "current time in a timezone"})
            assert "mcp_time_get_current_time" in text(found)
            now = await s.call_tool("mcp_time_get_current_time", {"timezone": "UTC"})
            assert not now.is_error and json.loads(text(now))["timezone"] == "UTC"
            status = await s.call_tool("mcp_git_git_status", {"repo_path": str(repo)})
            assert not status.is_error and "new.txt" in text(status)
            bad = await s.call_tool("mcp_time_get_current_time", {"timezone": 5})
            assert bad.is_error and "was not called" in text(bad)

    anyio.run(main)
