"""The skills facade: listing skills, their readiness, and switching them on and off, wired
to the real machine (finding them is ``selection.relevance``, the prompt ``selection.offer``).

Every function resolves paths at call time and takes ``cwd`` (default: the process working
directory, as in the design document).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemon_skills.paths import PathArg, Scope, explicit_scope, resolve_cwd
from lemon_skills.settings import mcp_server_names
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.catalog.readiness import SkillStatus, evaluate, not_found
from lemon_skills.skills.catalog.registry import default_registry, require, view
from lemon_skills.skills.format.model import Diagnostic, Entry
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.selection import profiles


def list_skills(
    *, cwd: PathArg = None, refresh: bool = False, agent: str | None = None
) -> list[Entry]:
    """Every visible skill, sorted by key, disabled ones included (``enabled=False``);
    with ``agent``, only those inside its skill profile.

    Raises:
        ConfigError: ``agent`` has no profile in skills.json.
    """
    v = view(cwd, refresh=refresh)
    return profiles.keep(v.entries, profiles.select(v.enablement.profiles, agent))


def get(
    key: str, *, cwd: PathArg = None, refresh: bool = False, agent: str | None = None
) -> Entry | None:
    """The visible skill with ``key`` (inside ``agent``'s profile, when given), or None."""
    v = view(cwd, refresh=refresh)
    profile = profiles.select(v.enablement.profiles, agent)
    entry = v.by_key.get(key)
    return entry if entry is not None and (profile is None or profile.admits(key)) else None


def diagnostics(*, cwd: PathArg = None) -> list[Diagnostic]:
    """Every problem found loading the skills visible from ``cwd``."""
    return list(view(cwd).diagnostics)


def status(key: str, *, cwd: PathArg = None) -> SkillStatus:
    """Readiness of one skill (``ready``, ``activation_state``, what is missing...)."""
    v = view(cwd)
    entry = v.by_key.get(key)
    if entry is None:
        return not_found(key)
    return evaluate(
        entry,
        enabled_state=v.enablement,
        env=os.environ,
        blocked=_audit_blocked(entry, v.cwd),
        available=frozenset(e.key for e in v.enabled()),
        mcp_servers=mcp_server_names(v.cwd),
    )


def _audit_blocked(entry: Entry, cwd: Path | None) -> bool:
    # An MCP skill has no lock record: the audit runs on its content before each use.
    return entry.source != "mcp" and entry.key in lockfile.blocked_keys(entry.source, cwd)


@dataclass(frozen=True, slots=True, kw_only=True)
class Toggled:
    """What enabling or disabling a key changed in one scope's skills.json."""

    key: str
    enabled: bool
    scope: Scope
    #: The key (or namespace) entered or left the scope's disabled list.
    listed: bool
    #: For a namespace ``<prefix>:*``: the skills switch of the MCP server ``<prefix>`` changed.
    #: A plugin and a server of one name share the namespace, so it is switched either way.
    switch: bool = False
    #: For a namespace: whether an MCP server of that name is configured (None: not known,
    #: no ``mcp_server_names`` provider is configured).
    server_configured: bool | None = None

    @property
    def changed(self) -> bool:
        """True when the file changed."""
        return self.listed or self.switch

    @property
    def server(self) -> str | None:
        """The MCP server whose skills switch a namespace key also sets."""
        return self.key[:-2] if enablement.is_namespace(self.key) else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; ``server_switch`` is None for a single skill."""
        switch = None
        if self.server is not None:
            switch = {
                "server": self.server,
                "on": self.enabled,
                "changed": self.switch,
                "configured": self.server_configured,
            }
        return {
            "key": self.key,
            "enabled": self.enabled,
            "scope": self.scope,
            "changed": self.changed,
            "disabled_list_changed": self.listed,
            "server_switch": switch,
        }


def toggle(
    key: str,
    enabled: bool,
    *,
    cwd: PathArg = None,
    global_: bool | None = None,
    scope: Scope | None = None,
) -> Toggled:
    """Enable or disable ``key`` in one scope's skills.json (default global); say what changed.

    Raises:
        SkillNotFound: no visible skill has that key.
        ConfigError: the scope's skills.json is corrupt (it is left untouched).
    """
    where = resolve_cwd(cwd)
    sc = explicit_scope(global_, scope) or "global"
    path = enablement.skills_json_path(sc, where)
    if enablement.is_namespace(key):
        # Every skill of the namespace, those that appear later included; an MCP server's
        # skills are also switched, as its listing is not read until they are on.
        listed = enablement.set_disabled(path, key, not enabled)
        switch = enablement.set_switch(path, key, enabled)
        default_registry().invalidate()
        names = mcp_server_names(where)
        known = None if names is None else key[:-2] in names
        return Toggled(
            key=key,
            enabled=enabled,
            scope=sc,
            listed=listed,
            switch=switch,
            server_configured=known,
        )
    entry = require(key, cwd=where)
    if entry.source == "mcp" and enabled:
        from lemon_skills.skills.remote import store as remote_store

        # Enabling an MCP skill by name approves the version it serves now.
        remote_store.pin(key, None, review=True)
    listed = enablement.set_disabled(path, key, not enabled)
    default_registry().invalidate()
    return Toggled(key=key, enabled=enabled, scope=sc, listed=listed)


def enable(
    key: str, *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> bool:
    """Remove ``key`` from the disabled list of a scope (default global)."""
    return toggle(key, True, cwd=cwd, global_=global_, scope=scope).changed


def disable(
    key: str, *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> bool:
    """Add ``key`` to the disabled list of a scope (default global)."""
    return toggle(key, False, cwd=cwd, global_=global_, scope=scope).changed


def refresh(*, cwd: PathArg = None) -> None:
    """Drop every cached scope so the next call reloads all skills from disk."""
    default_registry().refresh()
