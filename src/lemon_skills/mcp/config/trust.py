"""Whether the user trusts a project's ``.lemon/mcp.json`` to start its servers.

A cloned repository controls its ``.lemon/mcp.json``, and a stdio entry there is a command
line: starting it unasked would let any repository run code on ``lemon prompt``. So project
entries stay off until the user trusts that file (``lemon mcp trust``). Trust is recorded per
file, keyed by the SHA-256 of its bytes: any edit needs trust again. ``LEMON_TRUST_PROJECT_MCP=1``
trusts every project (for CI and the user's own automation). The global config, the
environment and servers configured in code are the user's own and always trusted.

The store is ``<agent>/mcp-trust.json``:
``{"version": 1, "projects": {"<abs path of mcp.json>": {"sha256": ..., "trusted_at": ...}}}``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lemon_skills import _fs
from lemon_skills.errors import ConfigError
from lemon_skills.paths import agent_dir

VERSION = 1
ENV = "LEMON_TRUST_PROJECT_MCP"
_TRUTHY = frozenset({"1", "true", "yes", "on"})

#: ``env``: trusted by ``LEMON_TRUST_PROJECT_MCP``; ``recorded``: the user trusted these bytes;
#: ``changed``: trusted once, edited since; ``unknown``: never trusted.
TrustState = Literal["env", "recorded", "changed", "unknown"]


@dataclass(frozen=True, slots=True)
class ProjectTrust:
    """The verdict on one project config file as read now."""

    path: Path
    sha256: str
    state: TrustState

    @property
    def trusted(self) -> bool:
        return self.state in ("env", "recorded")

    def command(self) -> str:
        """The command that trusts this file."""
        return f"lemon mcp trust --cwd {_quote(self.path.parent.parent)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "state": self.state,
            "trusted": self.trusted,
            "command": self.command(),
        }


def store_path() -> Path:
    """``<agent>/mcp-trust.json``."""
    return agent_dir() / "mcp-trust.json"


def digest(data: bytes) -> str:
    """The SHA-256 (hex) trust is keyed by."""
    return hashlib.sha256(data).hexdigest()


def env_trusts(env: Mapping[str, str] | None = None) -> bool:
    """``LEMON_TRUST_PROJECT_MCP`` set to 1/true/yes/on."""
    env = os.environ if env is None else env
    return env.get(ENV, "").strip().lower() in _TRUTHY


def check(path: Path, data: bytes, *, env: Mapping[str, str] | None = None) -> ProjectTrust:
    """The verdict on ``path`` holding ``data`` (the bytes the caller is about to parse)."""
    sha = digest(data)
    if env_trusts(env):
        return ProjectTrust(path, sha, "env")
    try:
        record = _records().get(_key(path))
    except ConfigError:
        record = None  # a broken store trusts nothing; `lemon mcp trust` reports it
    if not isinstance(record, Mapping):
        return ProjectTrust(path, sha, "unknown")
    return ProjectTrust(path, sha, "recorded" if record.get("sha256") == sha else "changed")


def trust(path: Path, data: bytes) -> ProjectTrust:
    """Record trust in ``path`` holding exactly ``data``."""
    sha = digest(data)

    def change(state: dict[str, Any]) -> None:
        _fs.refuse_newer(state, VERSION, path=store_path())
        state.setdefault("version", VERSION)
        projects = state.setdefault("projects", {})
        projects[_key(path)] = {"sha256": sha, "trusted_at": _now()}

    _fs.update_json(store_path(), change, default=_empty, mode=0o600)
    return ProjectTrust(path, sha, "recorded")


def revoke(path: Path) -> bool:
    """Forget trust in ``path``; False when it was not trusted."""
    removed: list[bool] = []

    def change(state: dict[str, Any]) -> None:
        _fs.refuse_newer(state, VERSION, path=store_path())
        projects = state.get("projects")
        removed.append(isinstance(projects, dict) and projects.pop(_key(path), None) is not None)

    if not store_path().exists():
        return False
    _fs.update_json(store_path(), change, default=_empty, mode=0o600)
    return bool(removed and removed[0])


def trusted_files() -> dict[str, dict[str, Any]]:
    """Every recorded file -> its record (``sha256``, ``trusted_at``)."""
    return {k: dict(v) for k, v in _records().items() if isinstance(v, Mapping)}


def _records() -> Mapping[str, Any]:
    state = _fs.read_json(store_path(), default=_empty)
    projects = state.get("projects")
    return projects if isinstance(projects, Mapping) else {}


def _empty() -> dict[str, Any]:
    return {"version": VERSION, "projects": {}}


def _key(path: Path) -> str:
    return str(path.resolve())


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _quote(path: Path) -> str:
    return shlex.quote(str(path))
