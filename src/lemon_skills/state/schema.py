"""The one schema of lemon-skills' state, as versioned migrations rendered for each backend.

Each migration lists DDL per table group (``approvals``, ``events``, ``pins``, ``usage``,
``imports``). The embedded backend keeps one SQLite file per group that needs SQL
(``approvals.db``, ``introspection.db``; pins and usage stay JSON files there) and records
the version in ``PRAGMA user_version``; PostgreSQL holds every group in one database and the
version in ``lemon_schema``. A database whose version is newer than :data:`VERSION` is refused
by both, never altered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

Dialect = Literal["sqlite", "postgresql"]

#: The schema version this lemon-skills writes and understands.
VERSION: Final = 1

#: Column types that differ between the dialects; DDL below names them in braces.
_TYPES: Final[Mapping[Dialect, Mapping[str, str]]] = {
    "sqlite": {
        "real": "REAL",
        "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",
        # Approval ids are looked up by prefix with a byte-wise range (id >= p AND id < p||'g').
        "key": "TEXT",
        "json": "TEXT",
    },
    "postgresql": {
        "real": "DOUBLE PRECISION",
        "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "key": 'TEXT COLLATE "C"',
        "json": "JSONB",
    },
}

_APPROVALS_V1 = """
CREATE TABLE approvals (
    id          {key} PRIMARY KEY,
    tool        TEXT NOT NULL,
    action      TEXT NOT NULL,
    rationale   TEXT NOT NULL,
    run_id      TEXT,
    session_key TEXT,
    agent_id    TEXT,
    created_at  {real} NOT NULL,
    expires_at  {real} NOT NULL,
    status      TEXT NOT NULL,
    decided_by  TEXT,
    decided_at  {real},
    reason      TEXT
);
CREATE INDEX approvals_status ON approvals (status, created_at);
CREATE INDEX approvals_run ON approvals (run_id);
"""

_EVENTS_V1 = """
CREATE TABLE IF NOT EXISTS events (
    id          {serial},
    type        TEXT    NOT NULL,
    ts          {real}  NOT NULL,
    key         TEXT,
    result      TEXT,
    run_id      TEXT,
    session_key TEXT,
    session_id  TEXT,
    agent_id    TEXT,
    engine      TEXT    NOT NULL DEFAULT 'lemon',
    provenance  TEXT    NOT NULL DEFAULT 'direct',
    payload     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS events_ts ON events (ts);
CREATE INDEX IF NOT EXISTS events_key_ts ON events (key, ts);
"""

# One row per pinned tool (``held``: some machine saw it differ from its pin, so every machine
# holds it until an operator approves); ``pin_servers.generation`` grows on every change of a
# server's pins, so a long-lived process re-checks its cached verdict with one indexed read.
_PINS_V1 = """
CREATE TABLE mcp_pins (
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    digest      TEXT NOT NULL,
    traits      TEXT,
    pinned_at   {real} NOT NULL,
    held        BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (server, tool)
);
CREATE TABLE pin_servers (
    server      TEXT PRIMARY KEY,
    generation  BIGINT NOT NULL
);
"""

# Counters are columns so concurrent increments are one ``SET n = n + 1``; the rest of the
# usage record (timestamps, ids, lifecycle) is a JSON object merged key by key.
_USAGE_V1 = """
CREATE TABLE skill_usage (
    scope             TEXT NOT NULL,
    skill             TEXT NOT NULL,
    load_count        BIGINT NOT NULL DEFAULT 0,
    write_count       BIGINT NOT NULL DEFAULT 0,
    write_error_count BIGINT NOT NULL DEFAULT 0,
    record            {json} NOT NULL,
    PRIMARY KEY (scope, skill)
);
"""

# What `lemon state migrate` already copied, so running it twice copies nothing twice.
_IMPORTS_V1 = """
CREATE TABLE state_imports (
    origin      TEXT PRIMARY KEY,
    copied_at   {real} NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    """The DDL that takes a database from ``version - 1`` to ``version``, per table group."""

    version: int
    groups: Mapping[str, str]


MIGRATIONS: Final = (
    Migration(
        1,
        {
            "approvals": _APPROVALS_V1,
            "events": _EVENTS_V1,
            "pins": _PINS_V1,
            "usage": _USAGE_V1,
            "imports": _IMPORTS_V1,
        },
    ),
)

#: The tables ``lemon state status`` counts, per group.
TABLES: Final = {
    "approvals": "approvals",
    "events": "events",
    "pins": "mcp_pins",
    "usage": "skill_usage",
}


def statements(dialect: Dialect, *, since: int, groups: tuple[str, ...] | None = None) -> list[str]:
    """The DDL statements that bring a database at version ``since`` to :data:`VERSION`."""
    types = _TYPES[dialect]
    out: list[str] = []
    for migration in MIGRATIONS:
        if migration.version <= since:
            continue
        for group, ddl in migration.groups.items():
            if groups is None or group in groups:
                rendered = ddl.format_map(types)
                out.extend(s.strip() for s in rendered.split(";") if s.strip())
    return out


def sqlite_schema(group: str) -> str:
    """The DDL of a fresh embedded store for one group (``;``-separated, as ``_sqlite`` takes)."""
    return ";\n".join(statements("sqlite", since=0, groups=(group,))) + ";\n"
