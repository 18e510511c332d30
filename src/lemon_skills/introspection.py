"""The introspection store: every skill event persisted to SQLite (``<agent>/introspection.db``).

Rows are ``skill_load_observed``, ``skill_write_observed`` and ``skill_prompt_render_observed``
with the run and session ids in their own columns and the rest of the event metadata as a JSON
payload. The database runs in WAL mode with a busy timeout, so several agent processes can
record at once while ``lemon skill events`` reads; ``PRAGMA user_version`` holds the schema
version and newer schemas are refused rather than guessed at.

With a shared database configured (``lemon_skills.state``) the same table lives there, written
by every machine; ``lemon skill events`` then reads the team's events.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from lemon_skills import _sqlite, state
from lemon_skills.context import current
from lemon_skills.errors import ConfigError
from lemon_skills.paths import agent_dir
from lemon_skills.state import schema
from lemon_skills.state.postgres import Postgres

SCHEMA_VERSION: Final = schema.VERSION
EVENT_TYPES: Final = (
    "skill_load_observed",
    "skill_write_observed",
    "skill_prompt_render_observed",
)

_SCHEMA = schema.sqlite_schema("events")

_COLUMNS = (
    "id, type, ts, key, result, run_id, session_key, session_id, agent_id, engine, "
    "provenance, payload"
)


def db_path() -> Path:
    """The introspection database of the current agent dir."""
    return agent_dir() / "introspection.db"


@dataclass(frozen=True, slots=True, kw_only=True)
class EventRow:
    """One persisted event."""

    id: int
    type: str
    ts: float
    key: str | None
    result: str | None
    run_id: str | None
    session_key: str | None
    session_id: str | None
    agent_id: str | None
    engine: str
    provenance: str
    payload: Mapping[str, Any]

    @property
    def recorded_at(self) -> str:
        """UTC ISO-8601 time of the event, to the second."""
        return datetime.fromtimestamp(self.ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.id,
            "type": self.type,
            "recorded_at": self.recorded_at,
            "ts": self.ts,
            "key": self.key,
            "result": self.result,
            "run_id": self.run_id,
            "session_key": self.session_key,
            "session_id": self.session_id,
            "agent_id": self.agent_id,
            "engine": self.engine,
            "provenance": self.provenance,
            "payload": dict(self.payload),
        }


#: Events kept; older ones are pruned as new ones arrive (``LEMON_INTROSPECTION_MAX_EVENTS``).
DEFAULT_MAX_EVENTS: Final = 100_000


def _max_events() -> int:
    try:
        return max(1, int(os.environ.get("LEMON_INTROSPECTION_MAX_EVENTS", DEFAULT_MAX_EVENTS)))
    except ValueError:
        return DEFAULT_MAX_EVENTS


class IntrospectionStore:
    """Append and query events in one SQLite file; safe across threads and processes.

    The store keeps the newest ``max_events`` events: every so often an insert deletes the
    rows that fell out of that window, so the file stops growing instead of filling the disk.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        max_events: int | None = None,
        database: Postgres | None = None,
    ) -> None:
        self.path = path if path is not None else db_path()
        self.database = database
        self.max_events = max_events if max_events is not None else _max_events()
        self._prune_every = max(1, min(1000, self.max_events // 10))
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    def record(
        self,
        type_: str,
        payload: Mapping[str, Any],
        *,
        ts: float,
        key: str | None = None,
        result: str | None = None,
        run_id: str | None = None,
        session_key: str | None = None,
        session_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Append one event; return its row id.

        Raises:
            ConfigError: the database is unreadable or was created by a newer lemon-skills.
        """
        row = (type_, ts, key, result, run_id, session_key, session_id, agent_id)
        body = json.dumps(dict(payload), sort_keys=True, ensure_ascii=False, default=str)
        if self.database is not None:
            return self._record_shared(self.database, (*row, body))
        with self._lock:
            conn = self._connect()
            try:
                with conn:
                    cur = conn.execute(
                        "INSERT INTO events (type, ts, key, result, run_id, session_key, "
                        "session_id, agent_id, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (*row, body),
                    )
                    rowid = int(cur.lastrowid or 0)
                    if rowid % self._prune_every == 0:
                        conn.execute("DELETE FROM events WHERE id <= ?", (rowid - self.max_events,))
            except sqlite3.Error as exc:
                raise ConfigError(f"cannot record event: {exc}", path=self.path) from exc
            return rowid

    def query(
        self,
        *,
        since: float | None = None,
        key: str | None = None,
        types: Sequence[str] = (),
        limit: int | None = None,
    ) -> list[EventRow]:
        """Events oldest first, filtered by time (epoch seconds), key and type; newest ``limit``."""
        where, args = _filters(since, key, types)
        sql = f"SELECT {_COLUMNS} FROM events{where} ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        if self.database is not None:
            with self.database.connection() as shared:
                return [_row(r) for r in reversed(shared.execute(sql, args).fetchall())]
        if not self.path.exists():
            return []
        with self._lock:
            conn = self._connect()
            try:
                rows = conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise ConfigError(f"cannot read events: {exc}", path=self.path) from exc
        return [_row(r) for r in reversed(rows)]

    def _record_shared(self, db: Postgres, values: tuple[Any, ...]) -> int:
        with db.connection() as conn:
            rowid = int(
                conn.scalar(
                    "INSERT INTO events (type, ts, key, result, run_id, session_key, "
                    "session_id, agent_id, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING id",
                    values,
                )
            )
            if rowid % self._prune_every == 0:
                conn.execute("DELETE FROM events WHERE id <= ?", (rowid - self.max_events,))
        return rowid

    def close(self) -> None:
        """Close the connection (it reopens on the next call)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = _sqlite.connect(
                self.path,
                schema=_SCHEMA,
                version=SCHEMA_VERSION,
                autocommit=False,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open introspection database: {exc}", path=self.path) from exc
        self._conn, self._pid = conn, os.getpid()
        return conn


_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, *, now: float) -> float:
    """Turn ``30m``, ``12h``, ``7d``, ``2w`` or an ISO date/time into epoch seconds.

    Raises:
        ValueError: neither a duration nor an ISO-8601 timestamp.
    """
    value = text.strip()
    unit = _UNITS.get(value[-1:].lower())
    if unit is not None and value[:-1].isdigit():
        return now - int(value[:-1]) * unit
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{text!r} is neither a duration (30m, 12h, 7d, 2w) nor an ISO date or time"
        ) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _filters(since: float | None, key: str | None, types: Sequence[str]) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if since is not None:
        clauses.append("ts >= ?")
        args.append(since)
    if key is not None:
        clauses.append("key = ?")
        args.append(key)
    if types:
        clauses.append(f"type IN ({', '.join('?' * len(types))})")
        args.extend(types)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def _row(r: tuple[Any, ...]) -> EventRow:
    try:
        payload = json.loads(r[11])
    except json.JSONDecodeError:
        payload = {"unparsable_payload": True}
    return EventRow(
        id=r[0],
        type=r[1],
        ts=r[2],
        key=r[3],
        result=r[4],
        run_id=r[5],
        session_key=r[6],
        session_id=r[7],
        agent_id=r[8],
        engine=r[9],
        provenance=r[10],
        payload=payload if isinstance(payload, dict) else {"value": payload},
    )


def default_store() -> IntrospectionStore:
    """The default context's store for the current agent dir (a new one when
    ``LEMON_AGENT_DIR`` changes); the shared database's when one is configured."""
    db = state.database()
    if db is not None:
        return IntrospectionStore(database=db)
    ctx = current()
    path = db_path()
    with ctx.lock:
        store: IntrospectionStore = ctx.service(
            IntrospectionStore, lambda: IntrospectionStore(path)
        )
        if store.path != path:
            store = IntrospectionStore(path)
            ctx.put(IntrospectionStore, store)
        return store
