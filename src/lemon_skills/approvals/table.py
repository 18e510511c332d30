"""How an approval is kept as a row (both backends' ``approvals`` table): its columns, the
row read back as a record, lookup by id prefix, and the announcement that wakes waiters."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Protocol

from lemon_skills import _sqlite
from lemon_skills.approvals.records import Approval, ApprovalContext
from lemon_skills.errors import ApprovalError, ApprovalNotFound, ConfigError
from lemon_skills.state import schema

SCHEMA_VERSION = schema.VERSION
#: The NOTIFY channel a decision is announced on (payload: the approval id).
CHANNEL = "lemon_approvals"

_SCHEMA = schema.sqlite_schema("approvals")
COLUMNS = (
    "id, tool, action, rationale, run_id, session_key, agent_id, created_at, expires_at, "
    "status, decided_by, decided_at, reason"
)


class Sql(Protocol):
    """The ``execute`` both backends' connections offer (``?`` placeholders)."""

    def execute(self, sql: str, args: Any = ..., /) -> Any: ...


def open_file(path: Path) -> sqlite3.Connection:
    return _sqlite.connect(path, schema=_SCHEMA, version=SCHEMA_VERSION)


def announce(conn: Sql, approval_id: str) -> None:
    """Wake the waiters on the shared database (the SQLite file needs no announcement)."""
    notify = getattr(conn, "notify", None)
    if notify is not None:
        notify(CHANNEL, approval_id)


def lookup(conn: Sql, approval_id: str) -> Approval:
    key = approval_id.strip().lower()
    if not key or any(c not in "0123456789abcdef" for c in key):
        raise ApprovalNotFound(approval_id)
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM approvals WHERE id >= ? AND id < ? LIMIT 2",
        (key, key + "g"),
    ).fetchall()
    if not rows:
        raise ApprovalNotFound(approval_id)
    if len(rows) > 1:
        raise ApprovalError(
            f"Approval id prefix {approval_id!r} is ambiguous",
            approval_id=approval_id,
            hint="give more characters of the id",
        )
    return from_row(rows[0])


def from_row(row: tuple[Any, ...]) -> Approval:
    (aid, tool, action, rationale, run_id, session_key, agent_id, created, expires, status) = row[
        :10
    ]
    return Approval(
        id=aid,
        tool=tool,
        action=json.loads(action),
        rationale=rationale,
        context=ApprovalContext(run_id=run_id, session_key=session_key, agent_id=agent_id),
        created_at=created,
        expires_at=expires,
        status=status,
        decided_by=row[10],
        decided_at=row[11],
        reason=row[12],
    )


def corrupt(path: Path, exc: sqlite3.DatabaseError) -> ConfigError:
    return ConfigError(
        f"approvals database is unusable ({exc})",
        path=path,
        hint="move the file away; pending approvals in it will have to be requested again",
    )
