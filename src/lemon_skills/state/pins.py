"""Where MCP tool pins are kept: a JSON file per server, or the shared database.

The storage is a few operations on ``tool -> digest`` maps; what a digest covers is decided by
``lemon_skills.mcp.catalog.pinning``. :meth:`PinStore.add` pins only tools not pinned yet (the
first pin wins, so two machines listing a tool at once cannot overwrite each other) and returns
the tools already pinned to another digest. :meth:`PinStore.hold` records that a machine saw a
tool differ from its pin, so every machine holds it, even one whose listing is older;
:meth:`PinStore.replace` is the operator's approval and lifts the holds. On the shared
database every change bumps the server's generation and is announced on :data:`CHANNEL`; a
process reads a server's generation once and keeps it until an announcement arrives, so the
check before each tool call costs no round trip.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from lemon_skills import _fs
from lemon_skills.state import database
from lemon_skills.state.embedded import pins_path, read_pin_file
from lemon_skills.state.postgres import Postgres, SqlConnection

CHANNEL = "lemon_pins"
_FILE_MODE = 0o600


class PinStore(Protocol):
    """A server's pins, wherever they live: per tool a digest of its name, description and
    schema, and a digest of its title and annotations (its traits)."""

    def read(self, server: str) -> tuple[dict[str, str], dict[str, str]]:
        """``(tool -> digest, tool -> traits)`` for every pinned tool of ``server``."""
        ...

    def add(self, server: str, pins: Mapping[str, str], traits: Mapping[str, str]) -> set[str]:
        """Pin tools (and traits) not pinned yet; return the tools already pinned to a
        different digest."""
        ...

    def replace(self, server: str, pins: Mapping[str, str], traits: Mapping[str, str]) -> None:
        """Pin these tools as given, whatever they were pinned to, and lift their holds."""
        ...

    def hold(self, server: str, tools: Iterable[str]) -> None:
        """Record that these pinned tools were seen changed."""
        ...

    def held(self, server: str) -> set[str]:
        """The tools some machine saw changed and nobody approved since."""
        ...

    def generation(self, server: str) -> int | None:
        """A number that changes whenever ``server``'s pins change; None when not tracked."""
        ...


class FilePins:
    """``<agent dir>/mcp-pins/<server>.json``: ``{"tools": {...}, "traits": {...}}``, 0600."""

    def read(self, server: str) -> tuple[dict[str, str], dict[str, str]]:
        return read_pin_file(pins_path(server))

    def add(self, server: str, pins: Mapping[str, str], traits: Mapping[str, str]) -> set[str]:
        clash: set[str] = set()

        def change(data: dict[str, Any]) -> None:
            tools, notes = _tables(data)
            for name, digest in pins.items():
                if tools.setdefault(name, digest) != digest:
                    clash.add(name)
            for name, value in traits.items():
                notes.setdefault(name, value)

        self._update(server, change)
        return clash

    def replace(self, server: str, pins: Mapping[str, str], traits: Mapping[str, str]) -> None:
        def change(data: dict[str, Any]) -> None:
            tools, notes = _tables(data)
            tools.update(pins)
            notes.update(traits)

        self._update(server, change)

    def hold(self, server: str, tools: Iterable[str]) -> None:
        """Nothing to share: this machine's next listing finds the change again."""

    def held(self, server: str) -> set[str]:
        return set()

    def generation(self, server: str) -> int | None:
        return None

    @staticmethod
    def _update(server: str, change: Any) -> None:
        path = pins_path(server)
        path.parent.mkdir(parents=True, exist_ok=True)
        _fs.update_json(path, change, default=dict, mode=_FILE_MODE)


def _tables(data: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    for table in ("tools", "traits"):
        if not isinstance(data.get(table), dict):
            data[table] = {}
    return data["tools"], data["traits"]


class SqlPins:
    """The ``mcp_pins`` table of the shared database."""

    def __init__(self, db: Postgres) -> None:
        self._db = db

    def read(self, server: str) -> tuple[dict[str, str], dict[str, str]]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT tool, digest, traits FROM mcp_pins WHERE server = ?", (server,)
            ).fetchall()
        return {str(t): str(d) for t, d, _ in rows}, {str(t): str(n) for t, _, n in rows if n}

    def add(self, server: str, pins: Mapping[str, str], traits: Mapping[str, str]) -> set[str]:
        clash: set[str] = set()
        with self._db.transaction() as conn:
            now = time.time()
            for name, digest in pins.items():
                cur = conn.execute(
                    "INSERT INTO mcp_pins (server, tool, digest, traits, pinned_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (server, tool) DO NOTHING",
                    (server, name, digest, traits.get(name), now),
                )
                if cur.rowcount != 1:
                    found = conn.scalar(
                        "SELECT digest FROM mcp_pins WHERE server = ? AND tool = ?",
                        (server, name),
                    )
                    if found != digest:
                        clash.add(name)
            for name, value in traits.items():
                conn.execute(
                    "UPDATE mcp_pins SET traits = ? "
                    "WHERE server = ? AND tool = ? AND traits IS NULL",
                    (value, server, name),
                )
            _bump(conn, server)
        self._forget(server)
        return clash

    def replace(self, server: str, pins: Mapping[str, str], traits: Mapping[str, str]) -> None:
        with self._db.transaction() as conn:
            now = time.time()
            for name, digest in pins.items():
                conn.execute(
                    "INSERT INTO mcp_pins (server, tool, digest, traits, pinned_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (server, tool) DO UPDATE "
                    "SET digest = EXCLUDED.digest, traits = EXCLUDED.traits, "
                    "pinned_at = EXCLUDED.pinned_at, held = FALSE",
                    (server, name, digest, traits.get(name), now),
                )
            _bump(conn, server)
        self._forget(server)

    def hold(self, server: str, tools: Iterable[str]) -> None:
        with self._db.transaction() as conn:
            changed = sum(
                conn.execute(
                    "UPDATE mcp_pins SET held = TRUE WHERE server = ? AND tool = ? AND NOT held",
                    (server, name),
                ).rowcount
                for name in tools
            )
            if changed:
                _bump(conn, server)
        self._forget(server)

    def _forget(self, server: str) -> None:
        """This process changed the pins: drop its cached generation without waiting for its
        own announcement to come back."""
        self._db.watched(CHANNEL).pop(server, None)

    def held(self, server: str) -> set[str]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT tool FROM mcp_pins WHERE server = ? AND held", (server,)
            ).fetchall()
        return {str(r[0]) for r in rows}

    def generation(self, server: str) -> int | None:
        # Asked before every tool call: answered from memory until a change is announced.
        cache = self._db.watched(CHANNEL)
        found = cache.get(server)
        if found is None:
            with self._db.connection() as conn:
                row = conn.execute(
                    "SELECT generation FROM pin_servers WHERE server = ?", (server,)
                ).fetchone()
            found = cache[server] = int(row[0]) if row else 0
        return int(found)


def _bump(conn: SqlConnection, server: str) -> None:
    conn.execute(
        "INSERT INTO pin_servers (server, generation) VALUES (?, 1) "
        "ON CONFLICT (server) DO UPDATE SET generation = pin_servers.generation + 1",
        (server,),
    )
    conn.notify(CHANNEL, server)


def pin_store() -> PinStore:
    """The pins of the configured backend."""
    db = database()
    return FilePins() if db is None else SqlPins(db)
