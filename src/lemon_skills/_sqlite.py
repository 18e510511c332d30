"""Open the SQLite stores lemon-skills keeps (approvals, introspection) the same way.

Every store is one file under the agent dir, created with mode 0600 (SQLite gives its -wal
and -shm files the same permissions), in WAL mode so readers never block the writer, with a
busy timeout so concurrent processes wait instead of failing, and with its schema version in
``PRAGMA user_version``. A database written by a newer lemon-skills is refused, never altered.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from lemon_skills.errors import ConfigError

BUSY_TIMEOUT_S = 10.0


def connect(
    path: Path,
    *,
    schema: str,
    version: int,
    autocommit: bool = True,
    check_same_thread: bool = True,
) -> sqlite3.Connection:
    """Open (creating if needed) the store at ``path`` and bring its schema to ``version``.

    ``schema`` is the ``;``-separated DDL of a fresh database. ``autocommit=False`` keeps the
    sqlite3 module's implicit transactions around data statements.

    Raises:
        ConfigError: the database was written by a newer schema version.
        sqlite3.DatabaseError: the file is not a usable database (callers word the error).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(
        path,
        timeout=BUSY_TIMEOUT_S,
        isolation_level=None if autocommit else "DEFERRED",
        check_same_thread=check_same_thread,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        _migrate(conn, path, schema, version)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path, schema: str, version: int) -> None:
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current == version:
        return
    if current > version:
        raise ConfigError(
            f"schema version {current} is newer than this lemon-skills understands ({version})",
            path=path,
            hint="upgrade lemon-skills, or move the database away to start a new one",
        )
    # Two processes may open a fresh file at once: the version is re-read under the write lock.
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < version:
            for statement in filter(str.strip, schema.split(";")):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
