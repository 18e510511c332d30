"""Skills core: discovery, SKILL.md parsing, registry, status, enablement, ranking, prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.skills.api import (
        diagnostics,
        disable,
        enable,
        get,
        list_skills,
        refresh,
        status,
    )
    from lemon_skills.skills.catalog.readiness import SkillStatus
    from lemon_skills.skills.format.manifest import Manifest, Requires
    from lemon_skills.skills.format.model import Diagnostic, Entry
    from lemon_skills.skills.selection.offer import render_prompt
    from lemon_skills.skills.selection.relevance import find_relevant

#: name -> module, imported on first use: importing one submodule (the registry, say) must
#: not drag in every other one through this package.
_LAZY = {
    "Diagnostic": "lemon_skills.skills.format.model",
    "Entry": "lemon_skills.skills.format.model",
    "Manifest": "lemon_skills.skills.format.manifest",
    "Requires": "lemon_skills.skills.format.manifest",
    "SkillStatus": "lemon_skills.skills.catalog.readiness",
    "find_relevant": "lemon_skills.skills.selection.relevance",
    "render_prompt": "lemon_skills.skills.selection.offer",
    **dict.fromkeys(
        (
            "diagnostics",
            "disable",
            "enable",
            "get",
            "list_skills",
            "refresh",
            "status",
        ),
        "lemon_skills.skills.api",
    ),
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
