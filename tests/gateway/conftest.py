"""Gateway tests: a real ``lemon mcp gateway`` process driven by the SDK's own client."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


@pytest.fixture
def servers(agent_dir: Path) -> Callable[..., Path]:
    """Write the global mcp.json with these entries (``{"name": ..., ...}``)."""

    def write(*entries: dict[str, Any]) -> Path:
        agent_dir.mkdir(parents=True, exist_ok=True)
        path = agent_dir / "mcp.json"
        doc = {
            "mcpServers": {e["name"]: {k: v for k, v in e.items() if k != "name"} for e in entries}
        }
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    return write


@asynccontextmanager
async def gateway(cwd: Path, *args: str, **session_kw: Any) -> AsyncIterator[ClientSession]:
    """A gateway process on stdio for ``cwd``, initialised, as a ``ClientSession``."""
    import os

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lemon_skills", "mcp", "gateway", "--cwd", str(cwd), *args],
        env=dict(os.environ),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, **session_kw) as session,
    ):
        await session.initialize()
        yield session


SHIFTY = Path(__file__).resolve().parent / "servers" / "shifty.py"


def shifty(name: str, state: Path, **extra: Any) -> dict[str, Any]:
    """The shifty fixture (grow, confirm, counted) with its state in ``state``."""
    state.mkdir(parents=True, exist_ok=True)
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(SHIFTY)],
        "env": {"SHIFTY_DIR": str(state)},
    } | extra


def text(result: Any) -> str:
    """The text of a tool result's first block."""
    return str(result.content[0].text)
