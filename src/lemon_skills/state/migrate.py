"""``lemon state migrate``: copy this machine's embedded state into the shared database.

Idempotent, so it can be run again after a failure or on every machine of a team:

* approvals keep their ids (``ON CONFLICT (id) DO NOTHING``);
* events are copied unless the database holds one of the same type, time and payload;
* pins are added where the database has none for that tool; a tool the database pins to a
  different digest keeps the database's pin and is reported as a conflict (it will be held
  until ``lemon mcp approve-changes``);
* usage counts are added to the shared counts once per sidecar and machine
  (``state_imports`` remembers which were copied), other fields fill what the database lacks.

The local files are only read; nothing is deleted.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemon_skills import _fs
from lemon_skills.state.embedded import local_pins
from lemon_skills.state.pins import SqlPins
from lemon_skills.state.postgres import Postgres, SqlConnection
from lemon_skills.state.usage import COUNTERS

_APPROVAL_COLUMNS = (
    "id, tool, action, rationale, run_id, session_key, agent_id, created_at, expires_at, "
    "status, decided_by, decided_at, reason"
)
_EVENT_COLUMNS = (
    "type, ts, key, result, run_id, session_key, session_id, agent_id, engine, provenance, payload"
)


@dataclass(slots=True)
class Copied:
    """What one run copied (and what it left alone, and why)."""

    approvals: int = 0
    events: int = 0
    pins: int = 0
    usage: int = 0
    pin_conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "approvals": self.approvals,
            "events": self.events,
            "pins": self.pins,
            "usage": self.usage,
            "pin_conflicts": list(self.pin_conflicts),
            "skipped": list(self.skipped),
        }


def copy_local(db: Postgres, *, agent: Path, sidecars: Mapping[str, Path]) -> Copied:
    """Copy the state under ``agent`` and the usage ``sidecars`` (scope -> file) into ``db``.

    ``sidecars`` keys are the shared scope names (``global``, ``project:<key>``).
    """
    out = Copied()
    db.status()  # reach the database (and bring its schema up) before reading anything
    out.approvals = _copy_rows(
        db,
        agent / "approvals.db",
        f"SELECT {_APPROVAL_COLUMNS} FROM approvals",
        f"INSERT INTO approvals ({_APPROVAL_COLUMNS}) VALUES ({_marks(13)}) "
        "ON CONFLICT (id) DO NOTHING",
    )
    out.events = _copy_rows(
        db,
        agent / "introspection.db",
        f"SELECT {_EVENT_COLUMNS} FROM events ORDER BY id",
        f"INSERT INTO events ({_EVENT_COLUMNS}) SELECT {_marks(11)} WHERE NOT EXISTS "
        "(SELECT 1 FROM events WHERE ts = ? AND type = ? AND payload = ?)",
        dedupe=lambda row: (row[1], row[0], row[10]),
    )
    pins = SqlPins(db)
    for server, (tools, traits) in local_pins(agent).items():
        before, _ = pins.read(server)
        clash = pins.add(server, tools, traits)
        out.pins += sum(1 for t in tools if t not in before)
        out.pin_conflicts += [f"{server}/{t}" for t in sorted(clash)]
    for scope, path in sidecars.items():
        copied = _copy_usage(db, scope, path)
        if copied is None:
            out.skipped.append(f"usage {path} (copied before)")
        else:
            out.usage += copied
    return out


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _copy_rows(
    db: Postgres,
    path: Path,
    select: str,
    insert: str,
    dedupe: Any = None,
) -> int:
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as local:
        try:
            rows = local.execute(select).fetchall()
        except sqlite3.OperationalError:
            return 0
    copied = 0
    with db.transaction() as conn:
        for row in rows:
            args = (*row, *dedupe(row)) if dedupe is not None else row
            copied += conn.execute(insert, args).rowcount
    return copied


def _copy_usage(db: Postgres, scope: str, path: Path) -> int | None:
    skills = _fs.read_json(path, default=dict).get("skills", {})
    if not isinstance(skills, dict) or not skills:
        return 0
    origin = f"usage:{socket.gethostname()}:{path.resolve()}"
    with db.transaction() as conn:
        first = conn.execute(
            "INSERT INTO state_imports (origin, copied_at) VALUES (?, ?) "
            "ON CONFLICT (origin) DO NOTHING",
            (origin, time.time()),
        ).rowcount
        if not first:
            return None
        for key, rec in skills.items():
            if isinstance(rec, dict):
                _add_usage(conn, scope, str(key), rec)
    return len(skills)


def _add_usage(conn: SqlConnection, scope: str, key: str, rec: Mapping[str, Any]) -> None:
    counts = [
        v if isinstance(v := rec.get(c), int) and not isinstance(v, bool) else 0 for c in COUNTERS
    ]
    body = json.dumps({k: v for k, v in rec.items() if k not in COUNTERS}, default=str)
    conn.execute(
        "INSERT INTO skill_usage (scope, skill, load_count, write_count, write_error_count, "
        "record) VALUES (?, ?, ?, ?, ?, ?::jsonb) ON CONFLICT (scope, skill) DO UPDATE SET "
        "load_count = skill_usage.load_count + EXCLUDED.load_count, "
        "write_count = skill_usage.write_count + EXCLUDED.write_count, "
        "write_error_count = skill_usage.write_error_count + EXCLUDED.write_error_count, "
        "record = EXCLUDED.record || skill_usage.record",
        (scope, key, *counts, body),
    )
