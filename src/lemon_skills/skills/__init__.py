"""Skills core: discovery, SKILL.md parsing, registry, status, enablement, ranking, prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.skills.api import (
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
    from lemon_skills.skills.catalog.readiness import SkillStatus
    from lemon_skills.skills.format.manifest import Manifest, Requires
    from lemon_skills.skills.format.model import Diagnostic, Entry

#: name -> module, imported on first use: importing one submodule (the registry, say) must
#: not drag in every other one through this package.
_LAZY = {
    "Diagnostic": "lemon_skills.skills.format.model",
    "Entry": "lemon_skills.skills.format.model",
    "Manifest": "lemon_skills.skills.format.manifest",
    "Requires": "lemon_skills.skills.format.manifest",
    "SkillStatus": "lemon_skills.skills.catalog.readiness",
    **dict.fromkeys(
        (
            "diagnostics",
            "disable",
            "enable",
            "find_relevant",
            "get",
            "list_skills",
            "refresh",
            "render_prompt",
            "status",
        ),
        "lemon_skills.skills.api",
    ),
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
