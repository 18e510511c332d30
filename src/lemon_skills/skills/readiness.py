"""Readiness of a skill: platform, binaries, environment, config, disabled and audit state.

``evaluate`` is pure (the environment, PATH lookup and platform are injected); ``status`` in
the facade wires it to the real machine.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lemon_skills.skills.enablement import Enablement
from lemon_skills.skills.model import Entry

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
            "disabled": self.disabled,
            "disabled_in": list(self.disabled_in),
            "blocked": self.blocked,
            "error": self.error,
        }


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
) -> SkillStatus:
    """Compute the status of ``entry``; precedence hidden > platform > blocked > not_ready.

    ``which`` finds a binary on PATH (default ``shutil.which``).
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
    state: ActivationState = "active"
    if not compatible:
        state = "platform_incompatible"
    elif blocked:
        state = "blocked"
    elif missing_bins or missing_any or missing_env or missing_config:
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
    )


def _present(name: str, env: Mapping[str, str], configured: Any) -> bool:
    """A requirement is met by a non-empty env var or a non-empty value in skills.json."""
    if env.get(name, "").strip():
        return True
    if isinstance(configured, Mapping):
        value = configured.get(name)
        return value is not None and str(value).strip() != ""
    return False
