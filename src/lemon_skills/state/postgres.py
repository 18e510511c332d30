"""The PostgreSQL backend: a connection pool, the schema check, and LISTEN/NOTIFY.

Statements are written once with ``?`` placeholders (the SQLite style the embedded stores use)
and translated here; every statement is prepared on a connection's first use of it, so a
repeated lookup is one round trip. Connections run in autocommit mode, like the embedded
stores: each statement is its own transaction unless a caller opens :meth:`transaction`.

Any failure to reach the server, at first use or later, is a :class:`StateUnavailable` naming
the URL without its password and what failed, raised within ``connect_timeout`` seconds (5
unless the URL says otherwise). Nothing falls back to local files. Notifications arrive on
one listening connection per process (``lemon_skills.state.notify``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from lemon_skills.errors import ConfigError, StateUnavailable
from lemon_skills.state import schema
from lemon_skills.state.config import redact
from lemon_skills.state.notify import Hub, Subscription

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

DEFAULT_CONNECT_TIMEOUT_S = 5
POOL_MAX = 8
# Serialises schema migrations between processes that open a fresh database at once.
_MIGRATION_LOCK = 0x6C656D6F6E


@functools.lru_cache(maxsize=256)
def _translate(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


class SqlConnection:
    """A pooled connection with the ``execute(sql, args)`` shape of ``sqlite3.Connection``."""

    def __init__(self, conn: psycopg.Connection[Any], db: Postgres) -> None:
        self.raw = conn
        self._db = db

    def execute(self, sql: str, args: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        """Run one statement (``?`` placeholders) and return its cursor."""
        return self.raw.execute(_translate(sql), tuple(args))

    def scalar(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """The first column of the first row (None when there is no row)."""
        row = self.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def notify(self, channel: str, payload: str) -> None:
        """Tell every listener on ``channel``; delivered when this transaction commits."""
        self.raw.execute("SELECT pg_notify(%s, %s)", (channel, payload))


@dataclass(frozen=True, slots=True)
class Status:
    """What ``lemon state status`` reports."""

    backend: str
    url: str | None
    schema_version: int
    counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "backend": self.backend,
            "url": self.url,
            "schema_version": self.schema_version,
            "counts": dict(self.counts),
        }


class Postgres:
    """One PostgreSQL database: opened (and its schema checked) on first use, once per process."""

    kind = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url
        self.display_url = redact(url)
        self._lock = threading.Lock()
        self._pool: ConnectionPool[Any] | None = None
        self._pid = -1
        self._hub: Hub | None = None
        self._hub_pid = -1
        self._watches: dict[str, tuple[Subscription, dict[str, Any]]] = {}

    @property
    def connect_timeout(self) -> int:
        """Seconds one connection attempt may take (``connect_timeout`` in the URL, else 5)."""
        raw = parse_qs(urlsplit(self.url).query).get("connect_timeout", [""])[0]
        return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_CONNECT_TIMEOUT_S

    def unavailable(self, exc: BaseException) -> StateUnavailable:
        """The one-line error for a failure to reach this database."""
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return StateUnavailable(self.display_url, lines[0] if lines else type(exc).__name__)

    @contextlib.contextmanager
    def connection(self) -> Iterator[SqlConnection]:
        """A pooled connection (autocommit); failures to reach the server become
        :class:`StateUnavailable`, other database errors :class:`ConfigError`."""
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = self._open()
        try:
            with pool.connection(timeout=self.connect_timeout) as conn:
                yield SqlConnection(conn, self)
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self.unavailable(exc) from exc
        except psycopg.Error as exc:
            raise ConfigError(f"state database {self.display_url}: {exc}") from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SqlConnection]:
        """A pooled connection inside one transaction (committed on success)."""
        with self.connection() as conn, conn.raw.transaction():
            yield conn

    def listen(self, channel: str) -> Subscription:
        """A subscription to ``channel`` on this process's one listening connection; the
        caller closes it."""
        with self._lock:
            if self._hub is None or self._hub_pid != os.getpid():
                self._hub = Hub(self._connect, self.unavailable, self.connect_timeout)
                self._hub_pid = os.getpid()
                self._watches = {}
            hub = self._hub
        return hub.subscribe(channel)

    def watched(self, channel: str) -> dict[str, Any]:
        """A process-wide cache that is emptied whenever a notification on ``channel`` arrives,
        so a value read from the database stays valid until some process announces a change.

        Raises:
            StateUnavailable: the listening connection failed (the cache is dropped with it).
        """
        with self._lock:
            watch = self._watches.get(channel)
        if watch is None:
            watch = (self.listen(channel), {})
            with self._lock:
                watch = self._watches.setdefault(channel, watch)
        sub, cache = watch
        try:
            if sub.poll():
                cache.clear()
        except StateUnavailable:
            with self._lock:
                self._watches.pop(channel, None)
            raise
        return cache

    def notify(self, channel: str, payload: str) -> None:
        """Send one notification on ``channel``."""
        with self.connection() as conn:
            conn.notify(channel, payload)

    def status(self) -> Status:
        """Backend, URL without password, schema version and row counts."""
        with self.connection() as conn:
            version = _version(conn.raw)
            counts = {
                name: int(conn.scalar(f"SELECT count(*) FROM {table}"))
                for name, table in schema.TABLES.items()
            }
        return Status(self.kind, self.display_url, version, counts)

    def close(self) -> None:
        """Close the pool (it reopens on the next use)."""
        with self._lock:
            pool, self._pool = self._pool, None
            hub, self._hub = self._hub, None
            self._watches = {}
        if hub is not None and self._hub_pid == os.getpid():
            hub.close()
        if pool is not None and self._pid == os.getpid():
            pool.close()

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg

        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=self.connect_timeout)
        except psycopg.OperationalError as exc:
            raise self.unavailable(exc) from exc

    def _open(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._pool is not None and self._pid == os.getpid():
                return self._pool
            try:
                from psycopg_pool import ConnectionPool
            except ImportError as exc:
                raise ConfigError(
                    f"{self.display_url} needs the PostgreSQL driver ({exc.name} is missing)",
                    hint="pip install 'lemon-skills[postgres]'",
                ) from exc
            # The first connection says precisely what failed and applies the migrations; the
            # pool would only report a timeout.
            with self._connect() as conn:
                _migrate(conn, self.display_url)
            pool: ConnectionPool[Any] = ConnectionPool(
                self.url,
                kwargs={
                    "autocommit": True,
                    "prepare_threshold": 0,
                    "connect_timeout": self.connect_timeout,
                },
                min_size=1,
                max_size=POOL_MAX,
                timeout=self.connect_timeout,
                open=False,
                name="lemon-state",
            )
            pool.open()
            self._pool, self._pid = pool, os.getpid()
            return pool


def _version(conn: psycopg.Connection[Any]) -> int:
    # A catalog query, not to_regclass(): the system cache may not yet see a table that a
    # concurrent migration committed while this one waited for the migration lock.
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables "
        "WHERE tablename = 'lemon_schema' AND schemaname = current_schema())"
    ).fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute("SELECT version FROM lemon_schema").fetchone()
    return int(found[0]) if found else 0


def _migrate(conn: psycopg.Connection[Any], display_url: str) -> None:
    """Bring the schema to :data:`schema.VERSION`; refuse a newer one before writing anything."""
    current = _version(conn)
    if current == schema.VERSION:
        return
    _refuse_newer(current, display_url)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        current = _version(conn)
        _refuse_newer(current, display_url)
        if current == schema.VERSION:
            return
        for statement in schema.statements("postgresql", since=current):
            conn.execute(statement)
        conn.execute("CREATE TABLE IF NOT EXISTS lemon_schema (version INTEGER NOT NULL)")
        conn.execute("DELETE FROM lemon_schema")
        conn.execute("INSERT INTO lemon_schema (version) VALUES (%s)", (schema.VERSION,))


def _refuse_newer(current: int, display_url: str) -> None:
    if current > schema.VERSION:
        raise ConfigError(
            f"state database {display_url} has schema version {current}, newer than this "
            f"lemon-skills understands ({schema.VERSION})",
            hint="upgrade lemon-skills on this machine; the database was left untouched",
        )
