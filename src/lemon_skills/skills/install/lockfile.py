"""The install lock ``skills.lock.json``: provenance and audit verdict of installed skills.

One file per scope, ``{"version": 1, "skills": {key: record}}``. A record (written by the
installer) holds: ``key``, ``source`` (as typed), ``kind`` (local, git, github), ``location``
(path or URL), ``ref``, ``path`` (subdirectory inside the source), ``commit``,
``content_hash`` (SKILL.md), ``bundle_hash``, ``files`` (per-file sha256), ``scripts``,
``trust``, ``audit`` (``verdict``, ``scanner``, ``findings``), ``approved_by``,
``installed_at`` and ``updated_at`` (ISO 8601, UTC).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lemon_skills import _fs
from lemon_skills.errors import ConfigError
from lemon_skills.paths import Scope, scope_root

VERSION = 1
#: The lock's file name in each scope's state dir (beside the scope's ``skill/`` dir).
FILE_NAME = "skills.lock.json"


def lock_path(scope: Scope, cwd: Path | None = None) -> Path:
    """Return the lockfile of a scope."""
    return scope_root(scope, cwd) / FILE_NAME


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


def records(path: Path) -> dict[str, dict[str, Any]]:
    """Every lock record of a scope, keyed by skill key.

    Raises:
        ConfigError: the lockfile is corrupt.
    """
    skills = read_lock(path)["skills"]
    return {k: v for k, v in skills.items() if isinstance(v, dict)}


def put(path: Path, key: str, rec: dict[str, Any] | None) -> dict[str, Any] | None:
    """Store (or, with None, delete) the record of ``key``; return the record it replaced.

    The returned value lets a failed install put the lock back exactly as it was.

    Raises:
        ConfigError: the lockfile is corrupt (it is left untouched).
    """
    previous: dict[str, Any] | None = None

    def change(state: dict[str, Any]) -> None:
        nonlocal previous
        _fs.refuse_newer(state, VERSION, path=path)
        skills = state.setdefault("skills", {})
        if not isinstance(skills, dict):
            raise ConfigError('"skills" must be an object keyed by skill key', path=path)
        state.setdefault("version", VERSION)
        old = skills.pop(key, None)
        previous = old if isinstance(old, dict) else None
        if rec is not None:
            skills[key] = rec

    if rec is None and not path.exists():
        return None
    _fs.update_json(path, change, default=empty_lock)
    return previous


def blocked_keys(scope: Scope, cwd: Path | None) -> frozenset[str]:
    """Keys whose lock record in ``scope`` carries a ``block`` audit verdict."""
    try:
        found = records(lock_path(scope, cwd))
    except ConfigError:
        return frozenset()
    return frozenset(
        k for k, rec in found.items() if (rec.get("audit") or {}).get("verdict") == "block"
    )
