"""lemon-skills: skills (SKILL.md knowledge modules) and MCP tools for AI agents.

The facade mirrors the LemonSkills design document::

    import lemon_skills
    lemon_skills.list(cwd="path/to/project")
    lemon_skills.find_relevant("I need to read and write files", max_results=3)
    lemon_skills.status("k8s-skill").missing_bins
    lemon_skills.install("gh:owner/repo", approve=True)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .config import configure
from .errors import LemonSkillsError, SkillNotFound
from .skills.api import (
    diagnostics,
    disable,
    enable,
    find_relevant,
    get,
    refresh,
    render_prompt,
    status,
)
from .skills.api import list_skills as list  # noqa: A001 - the design document's name
from .skills.model import Diagnostic, Entry
from .skills.status import SkillStatus

if TYPE_CHECKING:
    from .skills.approval import ApprovalRequest
    from .skills.install_api import install
    from .skills.lifecycle import uninstall, update, verify

__version__ = "0.1.0"

#: Imported on first use: installing pulls in the audit rules and git plumbing, which
#: commands that only read skills should not pay for at start-up.
_LAZY = {
    "ApprovalRequest": ".skills.approval",
    "install": ".skills.install_api",
    "uninstall": ".skills.lifecycle",
    "update": ".skills.lifecycle",
    "verify": ".skills.lifecycle",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ApprovalRequest",
    "Diagnostic",
    "Entry",
    "LemonSkillsError",
    "SkillNotFound",
    "SkillStatus",
    "configure",
    "diagnostics",
    "disable",
    "enable",
    "find_relevant",
    "get",
    "install",
    "list",
    "refresh",
    "render_prompt",
    "status",
    "uninstall",
    "update",
    "verify",
]
