"""Skill usage records in the shared database (the embedded backend keeps them in the
per-scope sidecar, ``lemon_skills.skills.usage.store``).

A record is ``(scope, skill)``: ``scope`` is ``global`` or ``project:<key>`` (see
:mod:`lemon_skills.state.identity`), so the same project on two machines is one project.
Counters are columns, incremented in one statement (``INSERT ... ON CONFLICT DO UPDATE SET
n = n + 1``), so concurrent loads and writes on many machines count exactly; the other fields
are a JSON object merged key by key in that same statement. Whole-record changes (lifecycle,
pins, the curator's pass) read the row ``FOR UPDATE`` inside one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from lemon_skills.state.postgres import Postgres, SqlConnection

COUNTERS: Final = ("load_count", "write_count", "write_error_count")
_SELECT = "SELECT skill, load_count, write_count, write_error_count, record FROM skill_usage"

Record = dict[str, Any]


class SqlUsage:
    """One scope's usage records on the shared database."""

    def __init__(self, db: Postgres, scope: str) -> None:
        self._db = db
        self.scope = scope

    def records(self) -> dict[str, Record]:
        """Every record of the scope, counters included (as the sidecar holds them)."""
        with self._db.connection() as conn:
            rows = conn.execute(f"{_SELECT} WHERE scope = ?", (self.scope,)).fetchall()
        return {str(r[0]): _merge(r) for r in rows}

    def count(
        self, key: str, counter: str, fields: Mapping[str, Any], defaults: Mapping[str, Any]
    ) -> None:
        """Add one to ``counter``; set ``fields``, and ``defaults`` where the record lacks them."""
        if counter not in COUNTERS:
            raise ValueError(f"unknown counter {counter!r}")
        first = json.dumps({**defaults, **fields})
        with self._db.connection() as conn:
            conn.execute(
                f"INSERT INTO skill_usage (scope, skill, {counter}, record) "
                "VALUES (?, ?, 1, ?::jsonb) ON CONFLICT (scope, skill) DO UPDATE SET "
                f"{counter} = skill_usage.{counter} + 1, "
                "record = (?::jsonb || skill_usage.record) || ?::jsonb",
                (self.scope, key, first, json.dumps(dict(defaults)), json.dumps(dict(fields))),
            )

    def change(self, key: str, fn: Callable[[Record], Record]) -> Record:
        """Apply ``fn`` to ``key``'s record (``{}`` when new) under a row lock; return it."""
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO skill_usage (scope, skill, record) VALUES (?, ?, '{}'::jsonb) "
                "ON CONFLICT (scope, skill) DO NOTHING",
                (self.scope, key),
            )
            row = conn.execute(
                f"{_SELECT} WHERE scope = ? AND skill = ? FOR UPDATE", (self.scope, key)
            ).fetchone()
            out = fn(_merge(row))
            _write(conn, self.scope, key, out)
        return out

    def update(self, change: Callable[[dict[str, Any]], Any]) -> None:
        """Apply ``change`` to the whole scope as a sidecar document (``{"version", "skills"}``)
        with every row locked; write back what it changed and delete what it dropped."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"{_SELECT} WHERE scope = ? ORDER BY skill FOR UPDATE", (self.scope,)
            ).fetchall()
            before = {str(r[0]): _merge(r) for r in rows}
            doc: dict[str, Any] = {"version": 1, "skills": {k: dict(v) for k, v in before.items()}}
            replaced = change(doc)
            after = (replaced if isinstance(replaced, dict) else doc).get("skills", {})
            for key in before.keys() - after.keys():
                conn.execute(
                    "DELETE FROM skill_usage WHERE scope = ? AND skill = ?", (self.scope, key)
                )
            for key, rec in after.items():
                if before.get(key) != rec:
                    _write(conn, self.scope, key, rec)

    def forget(self, key: str) -> bool:
        """Drop ``key``'s record; True if there was one."""
        with self._db.connection() as conn:
            cur = conn.execute(
                "DELETE FROM skill_usage WHERE scope = ? AND skill = ?", (self.scope, key)
            )
            return bool(cur.rowcount)


def _merge(row: Any) -> Record:
    """The sidecar form of a row: its JSON fields plus every counter above zero."""
    rec: Record = dict(row[4]) if row is not None and isinstance(row[4], dict) else {}
    for name, value in zip(COUNTERS, row[1:4] if row is not None else (), strict=False):
        if value:
            rec[name] = int(value)
    return rec


def _write(conn: SqlConnection, scope: str, key: str, rec: Mapping[str, Any]) -> None:
    counts = [_count(rec.get(c)) for c in COUNTERS]
    body = {k: v for k, v in rec.items() if k not in COUNTERS}
    conn.execute(
        "INSERT INTO skill_usage (scope, skill, load_count, write_count, write_error_count, "
        "record) VALUES (?, ?, ?, ?, ?, ?::jsonb) ON CONFLICT (scope, skill) DO UPDATE SET "
        "load_count = EXCLUDED.load_count, write_count = EXCLUDED.write_count, "
        "write_error_count = EXCLUDED.write_error_count, record = EXCLUDED.record",
        (scope, key, *counts, json.dumps(body, default=str)),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
