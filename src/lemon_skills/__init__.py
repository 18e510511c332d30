"""lemon-skills: skills (SKILL.md knowledge modules) and MCP tools for AI agents.

The facade mirrors the LemonSkills design document::

    import lemon_skills
    lemon_skills.list(cwd="path/to/project")
    lemon_skills.find_relevant("I need to read and write files", max_results=3)
    lemon_skills.status("k8s-skill").missing_bins
    lemon_skills.install("gh:owner/repo", approve=True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy_attrs import lazy_getattr

if TYPE_CHECKING:
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
    from .skills.approval import ApprovalRequest
    from .skills.install_api import install
    from .skills.lifecycle import uninstall, update, verify
    from .skills.model import Diagnostic, Entry
    from .skills.status import SkillStatus

__version__ = "0.1.0"

#: name -> "module" or "module:attribute", imported on first use. Nothing is imported with the
#: package itself, so the CLI and hosts pay only for what they touch (``lemon skill list``
#: never loads ranking, YAML, the audit rules or the MCP SDK).
_LAZY = {
    "ApprovalRequest": ".skills.approval",
    "Diagnostic": ".skills.model",
    "Entry": ".skills.model",
    "LemonSkillsError": ".errors",
    "SkillNotFound": ".errors",
    "SkillStatus": ".skills.status",
    "configure": ".config",
    "diagnostics": ".skills.api",
    "disable": ".skills.api",
    "enable": ".skills.api",
    "find_relevant": ".skills.api",
    "get": ".skills.api",
    "install": ".skills.install_api",
    "list": ".skills.api:list_skills",
    "refresh": ".skills.api",
    "render_prompt": ".skills.api",
    "status": ".skills.api",
    "uninstall": ".skills.lifecycle",
    "update": ".skills.lifecycle",
    "verify": ".skills.lifecycle",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


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
