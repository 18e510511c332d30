"""Readiness of a skill: platform, binaries, environment, config, disabled and audit state.

``evaluate`` is pure (the environment, PATH lookup and platform are injected); ``status`` in
the facade wires it to the real machine.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lemon_skills.skills.catalog.enablement import Enablement
from lemon_skills.skills.format.model import Entry

ActivationState = Literal["active", "not_ready", "hidden", "platform_incompatible", "blocked"]
WhichFn = Callable[[str], str | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillStatus:
    """Why a skill is or is not usable right now."""

    key: str
    ready: bool
    activation_state: ActivationState
    platform_compatible: bool = True
    missing_bins: tuple[str, ...] = ()
    missing_any_bins: tuple[str, ...] = ()
    missing_env: tuple[str, ...] = ()
    missing_config: tuple[str, ...] = ()
    #: Required skills that are not visible and enabled; all of ``requires.any_skills`` when
    #: none of them is; required MCP servers that are not configured.
    missing_skills: tuple[str, ...] = ()
    missing_any_skills: tuple[str, ...] = ()
    missing_mcp_servers: tuple[str, ...] = ()
    disabled: bool = False
    disabled_in: tuple[str, ...] = ()
    blocked: bool = False
    error: str | None = None
    platform: str = field(default_factory=lambda: current_platform())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; always every key."""
        return {
            "key": self.key,
            "ready": self.ready,
            "activation_state": self.activation_state,
            "platform_compatible": self.platform_compatible,
            "platform": self.platform,
            "missing_bins": list(self.missing_bins),
            "missing_any_bins": list(self.missing_any_bins),
            "missing_env": list(self.missing_env),
            "missing_config": list(self.missing_config),
            "missing_skills": list(self.missing_skills),
            "missing_any_skills": list(self.missing_any_skills),
            "missing_mcp_servers": list(self.missing_mcp_servers),
            "disabled": self.disabled,
            "disabled_in": list(self.disabled_in),
            "blocked": self.blocked,
            "error": self.error,
        }

    @property
    def missing_dependencies(self) -> bool:
        """True when a required skill or MCP server is missing (the skill is not offered)."""
        return bool(self.missing_skills or self.missing_any_skills or self.missing_mcp_servers)


def current_platform(name: str | None = None) -> str:
    """Map ``sys.platform`` onto the manifest vocabulary (linux, darwin, win32)."""
    name = sys.platform if name is None else name
    if name.startswith("win"):
        return "win32"
    if name == "darwin":
        return "darwin"
    return "linux"


def not_found(key: str) -> SkillStatus:
    """The status of a key no scope has."""
    return SkillStatus(
        key=key, ready=False, activation_state="not_ready", error=f"Skill not found: {key}"
    )


def evaluate(
    entry: Entry,
    *,
    enabled_state: Enablement,
    env: Mapping[str, str],
    which: WhichFn | None = None,
    platform: str | None = None,
    blocked: bool = False,
    available: Collection[str] | None = None,
    mcp_servers: Collection[str] | None = None,
) -> SkillStatus:
    """Compute the status of ``entry``; precedence hidden > platform > blocked > not_ready.

    ``which`` finds a binary on PATH (default ``shutil.which``). ``available`` holds the keys
    of the visible, enabled skills and ``mcp_servers`` the configured server names; None
    means unknown, and then those requirements are not checked.
    """
    if which is None:
        import shutil  # not at import: listing skills never checks binaries

        which = shutil.which
    plat = current_platform(platform)
    if enabled_state.is_disabled(entry.key) or not entry.enabled:
        return SkillStatus(
            key=entry.key,
            ready=False,
            activation_state="hidden",
            disabled=True,
            disabled_in=tuple(enabled_state.disabled_in(entry.key)),
            platform=plat,
        )
    m = entry.manifest
    req = m.requires
    compatible = "any" in m.platforms or plat in m.platforms
    settings = enabled_state.config.get(entry.key, {})
    missing_bins = tuple(b for b in req.bins if which(b) is None)
    missing_any = (
        req.any_bins if req.any_bins and all(which(b) is None for b in req.any_bins) else ()
    )
    missing_env = tuple(v for v in req.env if not _present(v, env, settings.get("env")))
    missing_config = tuple(v for v in req.config if not _present(v, env, settings.get("config")))
    deps = _dependencies(req.skills, req.any_skills, req.mcp, available, mcp_servers)
    state: ActivationState = "active"
    if not compatible:
        state = "platform_incompatible"
    elif blocked:
        state = "blocked"
    elif missing_bins or missing_any or missing_env or missing_config or any(deps.values()):
        state = "not_ready"
    return SkillStatus(
        key=entry.key,
        ready=state == "active",
        activation_state=state,
        platform_compatible=compatible,
        missing_bins=missing_bins,
        missing_any_bins=missing_any,
        missing_env=missing_env,
        missing_config=missing_config,
        blocked=blocked,
        platform=plat,
        missing_skills=deps.get("missing_skills", ()),
        missing_any_skills=deps.get("missing_any_skills", ()),
        missing_mcp_servers=deps.get("missing_mcp_servers", ()),
    )


def offerable(
    entry: Entry,
    *,
    platform: str | None = None,
    available: Collection[str] | None = None,
    mcp_servers: Collection[str] | None = None,
) -> bool:
    """True when a prompt may list ``entry`` (enabled, not blocked): ``evaluate`` would call it
    active or not ready, with its required skills and MCP servers present.

    Binaries and environment only tell active from not ready, so they are not looked up: the
    catalogue lists a skill that is not ready yet, and a check of every skill's binaries on
    every render is what made rendering grow with the catalogue.
    """
    platforms = entry.requirement("platforms")
    if "any" not in platforms and current_platform(platform) not in platforms:
        return False
    need = entry.requirement
    deps = _dependencies(need("skills"), need("any_skills"), need("mcp"), available, mcp_servers)
    return not any(deps.values())


def _dependencies(
    skills: tuple[str, ...],
    any_skills: tuple[str, ...],
    mcp: tuple[str, ...],
    available: Collection[str] | None,
    servers: Collection[str] | None,
) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    if available is not None:
        out["missing_skills"] = tuple(k for k in skills if k not in available)
        none_there = any_skills and not any(k in available for k in any_skills)
        out["missing_any_skills"] = any_skills if none_there else ()
    if servers is not None:
        out["missing_mcp_servers"] = tuple(s for s in mcp if s not in servers)
    return out


def _present(name: str, env: Mapping[str, str], configured: Any) -> bool:
    """A requirement is met by a non-empty env var or a non-empty value in skills.json."""
    if env.get(name, "").strip():
        return True
    if isinstance(configured, Mapping):
        value = configured.get(name)
        return value is not None and str(value).strip() != ""
    return False
