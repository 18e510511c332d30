"""Builders for MCP server entries pointing at the fixture servers of the test-suite."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).resolve().parent.parent / "mcp" / "servers"
SMOKE_MODULE = "lemon_skills.selftest.fixtures.server"


def rich(name: str | None = "rich", *args: str, **extra: Any) -> dict[str, Any]:
    """The rich fixture (echo, fail, pid, image, structured, sleep, ... two resources)."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SERVERS / "rich.py"), *args]}
    if name is not None:
        entry["name"] = name
    return entry | extra


def smoke(name: str = "fx", **extra: Any) -> dict[str, Any]:
    """The bundled smoke fixture (echo, fail, fixture://status, brief)."""
    return {"name": name, "command": sys.executable, "args": ["-m", SMOKE_MODULE]} | extra


def broken(name: str, mode: str, **extra: Any) -> dict[str, Any]:
    """A misbehaving stdio server: ``crash``, ``hang`` or ``garbage``."""
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(SERVERS / "broken.py"), mode],
    } | extra
