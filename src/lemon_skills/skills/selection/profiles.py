"""Per-agent skill sets: the ``profiles`` of ``skills.json``.

``{"profiles": {"<agent>": {"allow": [...], "deny": [...], "preload": [...], "budget": N}}}``,
every field optional, keys may be globs (``git-*``). A profile limits what one agent (a main
agent or a sub-agent) can see: a skill outside it is absent from every listing, ranking,
prompt and tool for that agent. ``preload`` skills are injected whole on every prompt; the rest
follow the normal ranking. A profile in the project's skills.json refines the global one of the
same agent: ``deny`` lists add up (a project can never un-deny), the other fields it sets win.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lemon_skills.errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """What one agent may see; ``allow`` None means every skill not denied."""

    agent: str
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    budget: int | None = None

    def admits(self, key: str) -> bool:
        """True when ``key`` is inside this profile."""
        if _any_match(key, self.deny):
            return False
        return self.allow is None or _any_match(key, self.allow) or _any_match(key, self.preload)

    def preloads(self, key: str) -> bool:
        """True when ``key`` is to be injected whole on every prompt."""
        return _any_match(key, self.preload) and self.admits(key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "agent": self.agent,
            "allow": None if self.allow is None else list(self.allow),
            "deny": list(self.deny),
            "preload": list(self.preload),
            "budget": self.budget,
        }


def _any_match(key: str, patterns: Iterable[str]) -> bool:
    return any(p == key or fnmatch.fnmatchcase(key, p) for p in patterns)


def keep(items: Sequence[T], profile: Profile | None, key: Any = None) -> list[T]:
    """``items`` (entries, or anything ``key`` maps to a skill key) inside ``profile``."""
    if profile is None:
        return list(items)
    get = key or (lambda e: e.key)
    return [e for e in items if profile.admits(get(e))]


def parse(data: Any, *, path: Path) -> dict[str, Profile]:
    """The ``profiles`` object of one skills.json.

    Raises:
        ConfigError: a profile or one of its fields has the wrong shape.
    """
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError('"profiles" must be an object of agent name -> profile', path=path)
    return {str(agent): _profile(str(agent), spec, path) for agent, spec in data.items()}


def _profile(agent: str, spec: Any, path: Path) -> Profile:
    where = f'profile "{agent}"'
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where} must be an object", path=path)
    unknown = sorted(set(spec) - {"allow", "deny", "preload", "budget"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown field(s) {', '.join(unknown)}; "
            "expected allow, deny, preload, budget",
            path=path,
        )
    budget = spec.get("budget")
    if budget is not None and (
        not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0
    ):
        raise ConfigError(f"{where}: budget must be a positive number of characters", path=path)
    allow = spec.get("allow")
    return Profile(
        agent=agent,
        allow=None if allow is None else _keys(allow, f"{where}.allow", path),
        deny=_keys(spec.get("deny", []), f"{where}.deny", path),
        preload=_keys(spec.get("preload", []), f"{where}.preload", path),
        budget=budget,
    )


def _keys(value: Any, where: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(k, str) and k for k in value):
        raise ConfigError(f"{where} must be a list of skill keys or globs", path=path)
    return tuple(value)


def merge(global_: Mapping[str, Profile], project: Mapping[str, Profile]) -> dict[str, Profile]:
    """Both scopes' profiles: a project profile refines the global one of the same agent."""
    out = dict(global_)
    for agent, p in project.items():
        g = out.get(agent)
        if g is None:
            out[agent] = p
            continue
        out[agent] = Profile(
            agent=agent,
            allow=p.allow if p.allow is not None else g.allow,
            deny=tuple(dict.fromkeys((*g.deny, *p.deny))),
            preload=p.preload or g.preload,
            budget=p.budget if p.budget is not None else g.budget,
        )
    return out


def select(profiles: Mapping[str, Profile], agent: str | None) -> Profile | None:
    """The profile of ``agent``; None when no agent is named.

    Raises:
        ConfigError: ``agent`` is named but no skills.json defines a profile for it (a typo
            must not silently lift every restriction).
    """
    if agent is None:
        return None
    profile = profiles.get(agent)
    if profile is None:
        known = ", ".join(sorted(profiles)) or "none defined"
        raise ConfigError(
            f"no skill profile for agent {agent!r} (profiles: {known})",
            hint='add it under "profiles" in skills.json',
        )
    return profile
