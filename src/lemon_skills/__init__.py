"""lemon-skills: skills (SKILL.md knowledge modules) and MCP tools for AI agents.

The facade mirrors the LemonSkills design document::

    import lemon_skills
    lemon_skills.list(cwd="path/to/project")
    lemon_skills.find_relevant("I need to read and write files", max_results=3)
    lemon_skills.status("k8s-skill").missing_bins
"""

from __future__ import annotations

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

__version__ = "0.1.0"

__all__ = [
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
    "list",
    "refresh",
    "render_prompt",
    "status",
]
