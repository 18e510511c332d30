"""Skills core: discovery, SKILL.md parsing, registry, status, enablement, ranking, prompt."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .._lazy_attrs import lazy_getattr

if TYPE_CHECKING:
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

#: name -> module, imported on first use: importing one submodule (the registry, say) must
#: not drag in every other one through this package.
_LAZY = {
    "Diagnostic": ".model",
    "Entry": ".model",
    "Manifest": ".manifest",
    "Requires": ".manifest",
    "SkillStatus": ".status",
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
        ".api",
    ),
}

# ``status`` names both a submodule and the facade function; the function wins, as it did when
# this package imported the facade eagerly. Importing the (light) submodule now and dropping the
# attribute the import system set keeps a later ``import ...skills.status`` from shadowing it.
importlib.import_module(".status", __name__)
del globals()["status"]


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


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
