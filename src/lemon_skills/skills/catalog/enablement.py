"""Enable/disable state and per-skill config in ``skills.json``, one file per scope.

A skill is disabled when *either* scope disables it: a project list adds to the global one,
it never replaces it. The ``disabled`` list holds skill keys and namespaces: ``<prefix>:*``
disables every skill keyed ``<prefix>:<name>`` (a plugin's, an MCP server's, ``cursor:*``),
including ones that appear later.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemon_skills import _fs
from lemon_skills.errors import ConfigError
from lemon_skills.paths import Scope, scope_root
from lemon_skills.skills.selection import profiles
from lemon_skills.skills.selection.profiles import Profile

VERSION = 1


def skills_json_path(scope: Scope, cwd: Path | None = None) -> Path:
    """Return the ``skills.json`` of a scope."""
    return scope_root(scope, cwd) / "skills.json"


def empty_state() -> dict[str, Any]:
    """The content of a ``skills.json`` that does not exist yet."""
    return {"version": VERSION, "disabled": [], "skills": {}}


@dataclass(frozen=True, slots=True)
class Block:
    """One entry of a scope's disabled list that keeps a skill off: its key or its namespace."""

    scope: Scope
    #: The disabled-list entry: the skill's own key or ``<prefix>:*``.
    key: str

    @property
    def command(self) -> str:
        """The command that lifts this entry (``enable`` defaults to the global scope)."""
        flag = " --project" if self.scope == "project" else ""
        return f"lemon skill enable {shlex.quote(self.key)}{flag}"

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"scope": self.scope, "key": self.key, "command": self.command}


@dataclass(frozen=True, slots=True)
class Enablement:
    """The merged enable/disable view of both scopes."""

    disabled_global: frozenset[str] = frozenset()
    disabled_project: frozenset[str] = frozenset()
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    errors: tuple[ConfigError, ...] = ()
    #: Per-agent skill profiles of both scopes, merged (see ``selection.profiles``).
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    #: Invalid ``profiles`` objects: those profiles are dropped, the rest of the file is used.
    profile_errors: tuple[ConfigError, ...] = ()

    def is_disabled(self, key: str) -> bool:
        """True when either scope disables ``key`` or its namespace."""
        return bool(self.disabled_in(key))

    def disabled_in(self, key: str) -> list[Scope]:
        """The scopes whose skills.json disables ``key`` or its namespace (``<prefix>:*``)."""
        space = namespace_of(key) or key
        out: list[Scope] = []
        if key in self.disabled_global or space in self.disabled_global:
            out.append("global")
        if key in self.disabled_project or space in self.disabled_project:
            out.append("project")
        return out

    def disabled_by(self, key: str) -> list[Block]:
        """Every disabled-list entry that keeps ``key`` off, global scope first."""
        keys = dict.fromkeys((key, namespace_of(key) or key))
        scopes: tuple[tuple[Scope, frozenset[str]], ...] = (
            ("global", self.disabled_global),
            ("project", self.disabled_project),
        )
        return [Block(scope, k) for scope, listed in scopes for k in keys if k in listed]


def namespace_of(key: str) -> str | None:
    """``<prefix>:*`` for a namespaced key (``review:pr-check``), None for a plain key."""
    prefix, sep, _ = key.partition(":")
    return f"{prefix}:*" if sep and prefix else None


def is_namespace(key: str) -> bool:
    """True for ``<prefix>:*``: every skill of a plugin, an MCP server or the Cursor rules."""
    return len(key) > 2 and key.endswith(":*") and ":" not in key[:-2]


def parse_state(data: Mapping[str, Any], *, path: Path) -> tuple[frozenset[str], dict[str, Any]]:
    """Validate one skills.json document; return its disabled set and per-skill config.

    Raises:
        ConfigError: ``disabled`` is not a list of strings or ``skills`` is not an object.
    """
    disabled = data.get("disabled", [])
    if not isinstance(disabled, list) or not all(isinstance(k, str) for k in disabled):
        raise ConfigError('"disabled" must be a list of skill keys', path=path)
    skills = data.get("skills", {})
    if not isinstance(skills, dict):
        raise ConfigError('"skills" must be an object of per-skill settings', path=path)
    return frozenset(disabled), skills


def load(global_path: Path, project_path: Path | None) -> Enablement:
    """Read both scopes; a corrupt file becomes an error in ``errors``, never an exception."""
    errors: list[ConfigError] = []
    sets: list[frozenset[str]] = []
    config: dict[str, dict[str, Any]] = {}
    scoped: list[dict[str, Profile]] = [{}, {}]
    profile_errors: list[ConfigError] = []
    for i, path in enumerate((global_path, project_path)):
        if path is None:
            sets.append(frozenset())
            continue
        try:
            data = _fs.read_json(path, default=empty_state)
            disabled, skills = parse_state(data, path=path)
        except ConfigError as exc:
            errors.append(exc)
            disabled, skills = frozenset(), {}
        else:
            # A broken profile costs only the profiles: an agent that names one is refused.
            try:
                scoped[i] = profiles.parse(data.get("profiles"), path=path)
            except ConfigError as exc:
                profile_errors.append(exc)
        sets.append(disabled)
        for key, value in skills.items():
            if isinstance(value, dict):
                config.setdefault(key, {}).update(value)
    return Enablement(
        sets[0],
        sets[1],
        config,
        tuple(errors),
        profiles.merge(*scoped),
        tuple(profile_errors),
    )


def set_disabled(path: Path, key: str, disabled: bool) -> bool:
    """Add or remove ``key`` from the disabled list of one file; return True if it changed.

    Raises:
        ConfigError: the file is corrupt (it is left untouched).
    """
    return bool(set_disabled_many(path, (key,), disabled))


def forget(path: Path, key: str) -> None:
    """Drop every trace of ``key`` from one skills.json (used by uninstall)."""

    def change(state: dict[str, Any]) -> None:
        _fs.refuse_newer(state, VERSION, path=path)
        current, skills = parse_state(state, path=path)
        if key in current:
            state["disabled"] = sorted(current - {key})
        skills.pop(key, None)

    if path.exists():
        _fs.update_json(path, change, default=empty_state)


def set_disabled_many(path: Path, keys: Collection[str], disabled: bool) -> list[str]:
    """``set_disabled`` for many keys in one locked write; return the keys that changed.

    Raises:
        ConfigError: the file is corrupt (it is left untouched).
    """
    changed: list[str] = []

    def edit(state: dict[str, Any], current: frozenset[str], skills: dict[str, Any]) -> bool:
        wanted = set(keys)
        changed.extend(sorted(wanted - current if disabled else wanted & current))
        if changed:
            state["disabled"] = sorted(current | wanted if disabled else current - wanted)
        return bool(changed)

    if keys:
        _edit(path, edit)
    return changed


def set_switch(path: Path, key: str, on: bool) -> bool:
    """Set ``{"enabled": on}`` in the per-skill settings of ``key``; return True if it changed.

    Raises:
        ConfigError: the file is corrupt (it is left untouched).
    """

    def edit(state: dict[str, Any], current: frozenset[str], skills: dict[str, Any]) -> bool:
        settings = skills.setdefault(key, {})
        if settings.get("enabled") is on:
            return False
        settings["enabled"] = on
        state["skills"] = skills
        return True

    return _edit(path, edit)


def _edit(
    path: Path, edit: Callable[[dict[str, Any], frozenset[str], dict[str, Any]], bool]
) -> bool:
    """Apply ``edit(state, disabled, skills)`` to one skills.json under its lock; a file a
    newer release wrote is refused, and one that changes gets every top-level key."""
    changed = False

    def change(state: dict[str, Any]) -> None:
        nonlocal changed
        _fs.refuse_newer(state, VERSION, path=path)
        current, skills = parse_state(state, path=path)
        changed = edit(state, current, skills)
        if changed:
            for k, v in empty_state().items():
                state.setdefault(k, v)

    _fs.update_json(path, change, default=empty_state)
    return changed
