from __future__ import annotations

import sqlite3

import pytest

from lemon_skills import _sqlite
from lemon_skills.errors import ConfigError

SCHEMA = "CREATE TABLE t (x INTEGER); CREATE INDEX t_x ON t (x)"


def test_fresh_store_is_private_wal_and_at_the_schema_version(tmp_path):
    path = tmp_path / "deep" / "store.db"
    conn = _sqlite.connect(path, schema=SCHEMA, version=3)
    try:
        conn.execute("INSERT INTO t VALUES (1)")
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    assert path.stat().st_mode & 0o777 == 0o600


def test_reopening_keeps_data_and_does_not_rerun_the_schema(tmp_path):
    path = tmp_path / "store.db"
    _sqlite.connect(path, schema=SCHEMA, version=1).execute(
        "INSERT INTO t VALUES (7)"
    ).connection.close()
    conn = _sqlite.connect(path, schema=SCHEMA, version=1)
    try:
        assert conn.execute("SELECT x FROM t").fetchall() == [(7,)]
    finally:
        conn.close()


def test_database_from_a_newer_version_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "store.db"
    _sqlite.connect(path, schema=SCHEMA, version=5).close()
    with pytest.raises(ConfigError, match="newer"):
        _sqlite.connect(path, schema=SCHEMA, version=2)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
    finally:
        conn.close()


def test_a_file_that_is_not_a_database_raises_database_error(tmp_path):
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        _sqlite.connect(path, schema=SCHEMA, version=1)


def test_a_broken_schema_rolls_back_and_leaves_the_version_unset(tmp_path):
    path = tmp_path / "store.db"
    with pytest.raises(sqlite3.OperationalError):
        _sqlite.connect(path, schema="CREATE TABLE a (x); CREATE TABLE oops (", version=1)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == []
    finally:
        conn.close()
