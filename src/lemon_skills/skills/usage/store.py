"""The usage sidecar ``skills.usage.json``: load/write counters, provenance and lifecycle per skill.

One file per scope (``<agent>/skills.usage.json``, ``<cwd>/.lemon/skills.usage.json``) holding
``{"version": 1, "skills": {key: record}}``. Every change is one locked read-modify-write
(``_fs.update_json``), so concurrent agent processes lose no count and a reader never sees a
torn file. Records hold counters, timestamps, ids and paths only, never skill text.

``lifecycle_state`` is one of active, stale, archived, pinned; ``pinned`` is also kept as its
own boolean so a pinned skill can be archived-and-protected: a pinned live skill reads
``"pinned"``, a pinned archived one reads ``"archived"`` with ``pinned: true``.

With a shared database configured (``lemon_skills.state``) the same records live there instead,
one set per scope (``global``, or the project named the same on every machine, see
``lemon_skills.state.identity``); counts from every machine add up exactly and nothing is
written to the sidecar.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from lemon_skills import _fs, state
from lemon_skills.errors import ConfigError, UsageError
from lemon_skills.paths import Scope, agent_dir, scope_root
from lemon_skills.state.identity import project_key
from lemon_skills.state.usage import COUNTERS, SqlUsage

LifecycleState = Literal["active", "stale", "archived", "pinned"]
STATES: Final = ("active", "stale", "archived", "pinned")
VERSION: Final = 1
FILE_NAME: Final = "skills.usage.json"
DEFAULT_STALE_DAYS: Final = 30
DEFAULT_ARCHIVE_DAYS: Final = 90

ClockFn = Callable[[], datetime]
Record = dict[str, Any]

_LOAD_FIELDS: Final = {
    "view": "last_view",
    "tool_call_id": "last_tool_call_id",
    "run_id": "last_run_id",
    "source": "source",
    "path": "path",
}
_WRITE_FIELDS: Final = {
    "action": "last_action",
    "agent_id": "last_writer_agent_id",
    "run_id": "last_run_id",
    "tool_call_id": "last_tool_call_id",
    "path": "path",
    "file_path": "file_path",
}


def usage_path(scope: Scope, cwd: Path | None = None) -> Path:
    """The sidecar of a scope."""
    return scope_root(scope, cwd) / FILE_NAME


def empty_state() -> dict[str, Any]:
    """The content of a sidecar that does not exist yet."""
    return {"version": VERSION, "skills": {}}


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """UTC ISO-8601 to the second: ``2026-05-06T00:00:00Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    """Parse an ISO-8601 timestamp (naive ones are UTC); None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def normalise(record: Mapping[str, Any] | None) -> Record:
    """A copy of ``record`` with a valid ``lifecycle_state`` and a ``pinned`` boolean."""
    rec: Record = dict(record) if isinstance(record, Mapping) else {}
    state = rec.get("lifecycle_state")
    state = state if state in STATES else "active"
    pinned = rec.get("pinned") is True or state == "pinned"
    if pinned and state in ("active", "stale"):
        state = "pinned"
    rec["lifecycle_state"], rec["pinned"] = state, pinned
    return rec


_ENCODER: Final = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def dump_sidecar(data: Mapping[str, Any]) -> str:
    """Lay the sidecar out with one line per skill: greppable, and serialised by the C encoder
    (an indented dump of hundreds of records would dominate the cost of counting a load)."""

    enc = _ENCODER.encode
    parts = []
    for key in sorted(data):
        value = data[key]
        if key == "skills" and isinstance(value, dict) and value:
            rows = ",\n".join(f"    {enc(k)}: {enc(value[k])}" for k in sorted(value))
            parts.append(f'  "skills": {{\n{rows}\n  }}')
        else:
            parts.append(f"  {enc(key)}: {enc(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def apply_load(rec: Record, meta: Mapping[str, Any], now: datetime) -> Record:
    """Count one successful load into ``rec`` (pure)."""
    rec = normalise(rec)
    rec["load_count"] = as_count(rec.get("load_count")) + 1
    rec["last_loaded_at"] = iso(now)
    _copy_fields(rec, meta, _LOAD_FIELDS)
    if session := meta.get("session_key") or meta.get("session_id"):
        rec["last_session_key"] = session
    return rec


def apply_write(rec: Record, meta: Mapping[str, Any], now: datetime) -> Record:
    """Count one accepted or rejected write into ``rec`` (pure)."""
    rec = normalise(rec)
    ok = meta.get("result") == "ok"
    counter = "write_count" if ok else "write_error_count"
    rec[counter] = as_count(rec.get(counter)) + 1
    rec["last_write_at"] = iso(now)
    _copy_fields(rec, meta, _WRITE_FIELDS)
    if session := meta.get("session_key") or meta.get("session_id"):
        rec["last_session_key"] = session
    if ok and meta.get("action") == "create":
        rec.setdefault("created_at", iso(now))
        rec.setdefault("created_by", "agent")
        if meta.get("agent_id"):
            rec.setdefault("created_by_agent_id", meta["agent_id"])
    return rec


def scope_of(meta: Mapping[str, Any]) -> tuple[Scope, Path | None] | None:
    """Which sidecar an event belongs to: ``scope`` else ``source``; None when unplaceable."""
    where = meta.get("scope") or meta.get("source")
    if where == "project":
        cwd = meta.get("cwd")
        return ("project", Path(cwd)) if isinstance(cwd, str) and cwd else None
    return "global", None


class UsageStore:
    """Read and update one scope's sidecar. ``clock`` is injected for tests and replays."""

    def __init__(self, path: Path, *, clock: ClockFn = utc_now) -> None:
        self.path = path
        self._clock = clock

    @classmethod
    def for_scope(
        cls, scope: Scope, cwd: Path | None = None, *, clock: ClockFn = utc_now
    ) -> UsageStore:
        """The store of ``scope`` (``cwd`` is required for the project scope)."""
        return cls(usage_path(scope, cwd), clock=clock)

    def records(self) -> dict[str, Record]:
        """Every record, normalised.

        Raises:
            ConfigError: the sidecar is corrupt (it is left untouched).
            StateUnavailable: the shared database cannot be reached.
        """
        shared = self.shared()
        if shared is not None:
            return {k: normalise(v) for k, v in shared.records().items()}
        return {k: normalise(v) for k, v in _skills(_read_cached(self.path), self.path).items()}

    def shared(self) -> SqlUsage | None:
        """This scope's records on the shared database, or None for the sidecar file."""
        db = state.database()
        if db is None:
            return None
        root = self.path.parent
        scope = "global" if root == agent_dir() else "project:" + project_key(root.parent)
        return SqlUsage(db, scope)

    def exists(self) -> bool:
        """Whether there may be records (the sidecar exists, or the database is shared)."""
        return self.shared() is not None or self.path.exists()

    def document(self) -> dict[str, Any]:
        """The whole scope as the sidecar holds it (``{"version", "skills"}``), read-only."""
        shared = self.shared()
        if shared is None:
            return _fs.read_json(self.path, default=empty_state)
        return {"version": VERSION, "skills": shared.records()}

    def update(self, change: Callable[[dict[str, Any]], Any]) -> None:
        """Apply ``change`` to the whole scope's document in one locked read-modify-write."""
        shared = self.shared()
        if shared is not None:
            shared.update(change)
        else:
            _fs.update_json(self.path, change, default=empty_state, dump=dump_sidecar)

    def get(self, key: str) -> Record:
        """The record of ``key``; ``{"lifecycle_state": "active", "pinned": False}`` if unknown."""
        return self.records().get(key) or normalise(None)

    def is_pinned(self, key: str) -> bool:
        """True when ``key`` is pinned (protected from delete and archive)."""
        return bool(self.get(key)["pinned"])

    def record_load(self, meta: Mapping[str, Any]) -> bool:
        """Count a load event; misses and blank keys are ignored. Return True if counted."""
        key = meta.get("key")
        if not isinstance(key, str) or not key.strip() or meta.get("result") != "ok":
            return False
        shared = self.shared()
        if shared is not None:
            _count(shared, key, "load_count", apply_load({}, meta, self._clock()))
            return True
        self._change(key, lambda rec: apply_load(rec, meta, self._clock()))
        return True

    def record_write(self, meta: Mapping[str, Any]) -> bool:
        """Count a write event. A successful delete drops the record; rejected writes count only
        for skills that exist on disk (``path`` set), so bad names never create records."""
        name = meta.get("name")
        if not isinstance(name, str) or not name.strip():
            return False
        ok = meta.get("result") == "ok"
        if ok and meta.get("action") == "delete":
            self.forget(name)
            return True
        if not ok and not meta.get("path"):
            return False
        shared = self.shared()
        if shared is not None:
            counter = "write_count" if ok else "write_error_count"
            _count(shared, name, counter, apply_write({}, meta, self._clock()))
            return True
        self._change(name, lambda rec: apply_write(rec, meta, self._clock()))
        return True

    def set_state(self, key: str, state: str, *, agent_id: str | None = None) -> Record:
        """Set the lifecycle state (``"pinned"`` pins); return the new record.

        Raises:
            UsageError: ``state`` is not one of active, stale, archived, pinned.
        """
        if state not in STATES:
            raise UsageError(f"invalid lifecycle state: {state}")

        def change(rec: Record) -> Record:
            if state == "pinned":
                rec["pinned"] = True
            else:
                rec["lifecycle_state"] = state
                if state == "archived":
                    rec["archived_at"] = iso(self._clock())
            return self._stamp(rec, agent_id)

        return self._change(key, change)

    def set_pinned(self, key: str, pinned: bool, *, agent_id: str | None = None) -> Record:
        """Pin or unpin; unpinning a pinned live skill makes it active, an archived one stays."""

        def change(rec: Record) -> Record:
            rec["pinned"] = pinned
            if not pinned and rec.get("lifecycle_state") == "pinned":
                rec["lifecycle_state"] = "active"
            return self._stamp(rec, agent_id)

        return self._change(key, change)

    def record_created(self, key: str, *, agent_id: str | None = None) -> Record:
        """Record that an agent created ``key``: the provenance that lets it change it later."""

        def change(rec: Record) -> Record:
            rec["created_by"] = "agent"
            rec.setdefault("created_at", iso(self._clock()))
            if agent_id:
                rec["created_by_agent_id"] = agent_id
            return rec

        return self._change(key, change)

    def forget(self, key: str) -> bool:
        """Drop the record of ``key``; return True if there was one."""
        shared = self.shared()
        if shared is not None:
            return shared.forget(key)
        found = False

        def change(state: dict[str, Any]) -> None:
            nonlocal found
            found = _skills(state, self.path).pop(key, None) is not None

        if self.path.exists():
            _fs.update_json(self.path, change, default=empty_state, dump=dump_sidecar)
        return found

    def now(self) -> datetime:
        """The store's clock (the real UTC time unless a test gave another)."""
        return self._clock()

    def _stamp(self, rec: Record, agent_id: str | None) -> Record:
        rec["state_updated_at"] = iso(self._clock())
        if agent_id:
            rec["state_updated_by_agent_id"] = agent_id
        return rec

    def _change(self, key: str, fn: Callable[[Record], Record]) -> Record:
        shared = self.shared()
        if shared is not None:
            return dict(shared.change(key, lambda rec: normalise(fn(normalise(rec)))))
        out: Record = {}

        def change(state: dict[str, Any]) -> None:
            nonlocal out
            skills = _skills(state, self.path)
            state.setdefault("version", VERSION)
            out = normalise(fn(normalise(skills.get(key))))
            skills[key] = out

        _fs.update_json(self.path, change, default=empty_state, dump=dump_sidecar)
        return dict(out)


#: Fields a write sets only on a record that lacks them (``apply_write``'s ``setdefault``).
_FIRST_ONLY: Final = ("created_at", "created_by", "created_by_agent_id")


def _count(shared: SqlUsage, key: str, counter: str, delta: Record) -> None:
    """Count one event on the shared database: ``delta`` is the event applied to an empty
    record; its counter becomes ``n = n + 1`` and its fields a merge (lifecycle untouched)."""
    skip = {*COUNTERS, "lifecycle_state", "pinned", *_FIRST_ONLY}
    fields = {k: v for k, v in delta.items() if k not in skip}
    first: Record = {k: delta[k] for k in _FIRST_ONLY if k in delta}
    shared.count(key, counter, fields, first)


def _copy_fields(rec: Record, meta: Mapping[str, Any], fields: Mapping[str, str]) -> None:
    for src, dst in fields.items():
        value = meta.get(src)
        if value is not None and value != "":
            rec[dst] = value


def as_count(value: Any) -> int:
    """An integer counter, 0 for anything else (booleans included)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_text(value: Any) -> str | None:
    """A non-empty string field, else None."""
    return value if isinstance(value, str) and value else None


def last_activity(rec: Mapping[str, Any], *, keep_unparsable: bool = False) -> str | None:
    """The latest parsable of ``last_loaded_at``, ``last_write_at``, ``created_at``.

    With ``keep_unparsable`` a record holding only unparsable values returns the first of them
    (so a report can show what is there instead of "never").
    """
    values = [
        v for k in ("last_loaded_at", "last_write_at", "created_at") if (v := as_text(rec.get(k)))
    ]
    parsed = [(t, v) for v in values if (t := parse_time(v)) is not None]
    if parsed:
        return max(parsed)[1]
    return values[0] if keep_unparsable and values else None


def days_since(value: Any, now: datetime) -> int | None:
    """Whole days from the timestamp ``value`` to ``now`` (never negative); None if unparsable."""
    moment = parse_time(value)
    return None if moment is None else max(0, (now - moment).days)


def _skills(state: dict[str, Any], path: Path) -> dict[str, Any]:
    skills = state.setdefault("skills", {})
    if not isinstance(skills, dict):
        raise ConfigError('"skills" must be an object keyed by skill key', path=path)
    return skills


_cache: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def _read_cached(path: Path) -> dict[str, Any]:
    """Read the sidecar, reusing the last parse while its stat signature is unchanged."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return empty_state()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from exc
    sig = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _cache.get(path)
    if hit is not None and hit[0] == sig:
        return hit[1]
    data = _fs.read_json(path, default=empty_state)
    if len(_cache) > 64:
        _cache.clear()
    _cache[path] = (sig, data)
    return data
