"""The embedded backend: each store's own files under the agent dir (the default).

The stores keep their files themselves; this module only reports on them and offers the
notification seam, which on one machine is a timed re-check (the stores already notice each
other's writes through the files).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path
from typing import Any

from lemon_skills import _fs, paths
from lemon_skills.paths import agent_dir
from lemon_skills.state.postgres import Status


class _Timer:
    """A listener that only times out: callers re-check their state after each wait."""

    def wait(self, timeout: float) -> bool:
        time.sleep(max(0.0, timeout))
        return False

    def close(self) -> None:
        return None


class Embedded:
    """The files under the agent dir."""

    kind = "embedded"

    def status(self) -> Status:
        """Schema version and row counts of the local files (none is created)."""
        root = agent_dir()
        approvals, v1 = _sqlite_count(root / "approvals.db", "approvals")
        events, v2 = _sqlite_count(root / "introspection.db", "events")
        counts = {
            "approvals": approvals,
            "events": events,
            "pins": sum(len(tools) for tools, _ in local_pins(root).values()),
            "usage": len(_fs.read_json(root / "skills.usage.json", default=dict).get("skills", {})),
        }
        return Status(self.kind, None, max(v1, v2), counts)

    def listen(self, channel: str) -> _Timer:
        """A listener that wakes at its timeout (the files carry no notifications)."""
        return _Timer()

    def notify(self, channel: str, payload: str) -> None:
        """Nothing to do: other processes on this machine read the files again."""

    def close(self) -> None:
        return None


def pins_path(server: str) -> Path:
    """Where ``server``'s pins are kept by the embedded backend."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in server)
    return paths.agent_dir() / "mcp-pins" / f"{safe}.json"


def read_pin_file(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The tool pins and the traits pins of one server's file."""
    data = _fs.read_json(path, default=dict)
    return _table(data.get("tools")), _table(data.get("traits"))


def _table(pins: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in pins.items()} if isinstance(pins, dict) else {}


def local_pins(root: Path) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Every server's pins in ``<root>/mcp-pins/``: file stem -> (tool pins, traits pins)."""
    folder = root / "mcp-pins"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return {path.stem: read_pin_file(path) for path in files}


def _sqlite_count(path: Path, table: str) -> tuple[int, int]:
    """Rows in ``table`` and the schema version of ``path``; (0, 0) when it does not exist."""
    if not path.exists():
        return 0, 0
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        try:
            rows = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        except sqlite3.OperationalError:
            rows = 0
    return rows, version
