"""Where approvals, tool pins, usage counts and skill events live: one seam, two backends.

* Embedded (the default): files under the agent dir, for one person on one machine
  (``approvals.db``, ``mcp-pins/<server>.json``, ``skills.usage.json`` per scope,
  ``introspection.db``).
* PostgreSQL, chosen by ``LEMON_DATABASE_URL=postgresql://...`` (or
  ``configure(database_url=...)``, or ``database_url`` in ``<agent dir>/state.json``): one
  database shared by every machine and gateway replica of a team.

The stores (``lemon_skills.approvals``, ``lemon_skills.introspection``, the MCP pins and the
skill usage sidecar) ask :func:`database` at each call: None means their embedded files, else
they run their statements on the shared database. Change notifications go through
:meth:`Backend.listen` / :meth:`Backend.notify` (LISTEN/NOTIFY on PostgreSQL). With the
database unreachable every store raises ``StateUnavailable``; none falls back to local files.
"""

from __future__ import annotations

from typing import Protocol

from lemon_skills.context import current
from lemon_skills.state.config import database_url, redact
from lemon_skills.state.embedded import Embedded
from lemon_skills.state.postgres import Postgres, Status

__all__ = ["Backend", "Embedded", "Listener", "Postgres", "Status", "backend", "database"]


class Listener(Protocol):
    """Waits for change notifications on one channel."""

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True when a change was announced."""
        ...

    def close(self) -> None:
        """Stop listening."""
        ...


class Backend(Protocol):
    """What both backends offer beyond their stores' own statements."""

    kind: str

    def status(self) -> Status:
        """Backend, URL without password, schema version and row counts."""
        ...

    def listen(self, channel: str) -> Listener:
        """Start listening for changes announced on ``channel``."""
        ...

    def notify(self, channel: str, payload: str) -> None:
        """Announce a change on ``channel`` to every listener."""
        ...


def database() -> Postgres | None:
    """The shared database when one is configured, else None (the embedded files).

    Raises:
        ConfigError: the configured URL is not a PostgreSQL URL.
    """
    url = database_url()
    if url is None:
        return None
    return open_database(url)


def open_database(url: str) -> Postgres:
    """The database at ``url``, one pool per process and context."""
    return current().service((Postgres, url), lambda: Postgres(url))


def backend() -> Backend:
    """The configured backend: the shared database, or the embedded files."""
    db = database()
    return db if db is not None else Embedded()


def describe(url: str | None) -> str:
    """A URL safe to show, or ``embedded`` when there is none."""
    return "embedded" if url is None else redact(url)
