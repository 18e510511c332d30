"""The install lock ``skills.lock.json``: provenance and audit verdict of installed skills."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import _fs
from ..errors import ConfigError
from ..paths import Scope, scope_root

VERSION = 1


def lock_path(scope: Scope, cwd: Path | None = None) -> Path:
    """Return the lockfile of a scope."""
    return scope_root(scope, cwd) / "skills.lock.json"


def empty_lock() -> dict[str, Any]:
    """The content of a lockfile that does not exist yet."""
    return {"version": VERSION, "skills": {}}


def read_lock(path: Path) -> dict[str, Any]:
    """Read a lockfile (empty when missing).

    Raises:
        ConfigError: the file is corrupt or ``skills`` is not an object.
    """
    data = _fs.read_json(path, default=empty_lock)
    if not isinstance(data.get("skills", {}), dict):
        raise ConfigError('"skills" must be an object keyed by skill key', path=path)
    data.setdefault("skills", {})
    return data


def record(path: Path, key: str) -> dict[str, Any] | None:
    """The lock record of ``key``, or None (also when the lockfile is unreadable)."""
    try:
        rec = read_lock(path)["skills"].get(key)
    except ConfigError:
        return None
    return rec if isinstance(rec, dict) else None
