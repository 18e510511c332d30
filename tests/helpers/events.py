"""Capture telemetry events in tests."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lemon_skills import telemetry


class Recorder:
    """Collects every emitted event."""

    def __init__(self) -> None:
        self.events: list[telemetry.Event] = []

    def __call__(self, event: telemetry.Event) -> None:
        self.events.append(event)

    def named(self, name: str) -> list[telemetry.Event]:
        """Events with this name, in order."""
        return [e for e in self.events if e.name == name]


@contextmanager
def recording() -> Iterator[Recorder]:
    """Attach a recorder for the duration of the block."""
    rec = Recorder()
    hid = telemetry.attach(rec)
    try:
        yield rec
    finally:
        telemetry.detach(hid)


def db_dump(path: Path) -> list[tuple[object, ...]]:
    """Every row of every table of a SQLite file, with a fresh connection."""
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [row for t in tables for row in conn.execute(f"SELECT * FROM {t}")]  # noqa: S608
    finally:
        conn.close()


def as_text(obj: object) -> str:
    """A JSON-ish rendering used to search records for leaked text."""
    return json.dumps(obj, default=str, ensure_ascii=False)
