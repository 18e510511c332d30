"""Fixtures for the state tests: one throwaway PostgreSQL server per test session, and a
``backend`` fixture that runs a test once on the embedded files and once on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.helpers import postgres

_TABLES = "approvals, events, mcp_pins, pin_servers, skill_usage, state_imports"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[postgres.Server]:
    """The session's PostgreSQL server; the tests that need it skip saying what is missing."""
    try:
        server = postgres.start()
    except postgres.Unavailable as exc:
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: postgres.Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """LEMON_DATABASE_URL set to the session server's database, emptied for this test."""
    import psycopg

    url = pg_server.url
    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('lemon_schema') IS NOT NULL").fetchone()
        if exists and exists[0]:
            conn.execute(f"TRUNCATE {_TABLES}")
    monkeypatch.setenv("LEMON_DATABASE_URL", url)
    return url


@pytest.fixture
def fresh_db(pg_server: postgres.Server) -> str:
    """The URL of a new, empty database on the session server (for schema tests)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pg_server.database_url(name)


@pytest.fixture(params=["embedded", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """Run the test on the embedded files, then on PostgreSQL (``LEMON_DATABASE_URL`` set)."""
    if request.param == "postgresql":
        request.getfixturevalue("pg_url")
    return str(request.param)
