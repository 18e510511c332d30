"""Skills core: discovery, SKILL.md parsing, registry, status, enablement, ranking, prompt."""

from __future__ import annotations

from .api import (
    diagnostics,
    disable,
    enable,
    find_relevant,
    get,
    list_skills,
    refresh,
    render_prompt,
    status,
)
from .manifest import Manifest, Requires
from .model import Diagnostic, Entry
from .status import SkillStatus

__all__ = [
    "Diagnostic",
    "Entry",
    "Manifest",
    "Requires",
    "SkillStatus",
    "diagnostics",
    "disable",
    "enable",
    "find_relevant",
    "get",
    "list_skills",
    "refresh",
    "render_prompt",
    "status",
]
