"""lemon-skills: skills (SKILL.md knowledge modules) and MCP tools for AI agents.

This module is the public API: everything a host needs, in one table. The facade mirrors the
LemonSkills design document::

    import lemon_skills
    lemon_skills.list(cwd="path/to/project")
    lemon_skills.find_relevant("I need to read and write files", max_results=3)
    lemon_skills.status("k8s-skill").missing_bins
    lemon_skills.install("gh:owner/repo", approve=True)

It is also the composition root: the only module (beside ``_default``) that may name every
layer. Nothing is imported with the package itself; each name is imported on first use, so the
CLI and hosts pay only for what they touch (``lemon skill list`` never loads ranking, YAML, the
audit rules or the MCP SDK).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills import context
from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:  # the same names as _API below; tests/test_public_api.py keeps them in step
    from lemon_skills import prompt
    from lemon_skills.approvals.store import ApprovalStore
    from lemon_skills.errors import LemonSkillsError, SkillNotFound
    from lemon_skills.mcp.source import McpSource
    from lemon_skills.prompt import render as render_prompt
    from lemon_skills.settings import configure
    from lemon_skills.skills.api import (
        diagnostics,
        disable,
        enable,
        get,
        refresh,
        status,
    )
    from lemon_skills.skills.api import list_skills as list  # noqa: A001 - the design's name
    from lemon_skills.skills.catalog.readiness import SkillStatus
    from lemon_skills.skills.curator.scheduler import CuratorConfig, CuratorManager
    from lemon_skills.skills.format.model import Diagnostic, Entry
    from lemon_skills.skills.install.lifecycle import uninstall, update, verify
    from lemon_skills.skills.install.review import ApprovalRequest
    from lemon_skills.skills.install.service import install
    from lemon_skills.skills.selection.relevance import find_relevant
    from lemon_skills.tool import Tool, ToolContext, ToolResult
    from lemon_skills.tools.manage import skill_manage
    from lemon_skills.tools.read import read_skill
    from lemon_skills.tools.registry import ToolRegistry

from lemon_skills.version import __version__

# Wiring across layers happens here, and only here: skills from MCP servers join the skills
# catalogue through the tools layer, which the skills layer may not import.
context.provide("skills.remote.sources", "lemon_skills.tools.mcp_skills:McpSkillSource")

_SKILLS = "lemon_skills.skills.api"

#: The public API: name -> "module" or "module:attribute" (a bare module path is the module).
_API = {
    # skills: discover, rank, inject, switch on and off
    "list": f"{_SKILLS}:list_skills",
    "get": _SKILLS,
    "find_relevant": "lemon_skills.skills.selection.relevance",
    "render_prompt": "lemon_skills.prompt:render",
    "status": _SKILLS,
    "diagnostics": _SKILLS,
    "enable": _SKILLS,
    "disable": _SKILLS,
    "refresh": _SKILLS,
    "prompt": "lemon_skills.prompt:",
    "Entry": "lemon_skills.skills.format.model",
    "Diagnostic": "lemon_skills.skills.format.model",
    "SkillStatus": "lemon_skills.skills.catalog.readiness",
    # install, update, uninstall, verify
    "install": "lemon_skills.skills.install.service",
    "update": "lemon_skills.skills.install.lifecycle",
    "uninstall": "lemon_skills.skills.install.lifecycle",
    "verify": "lemon_skills.skills.install.lifecycle",
    "ApprovalRequest": "lemon_skills.skills.install.review",
    # curation and approvals
    "CuratorManager": "lemon_skills.skills.curator.scheduler",
    "CuratorConfig": "lemon_skills.skills.curator.scheduler",
    "ApprovalStore": "lemon_skills.approvals.store",
    # agent tools and MCP
    "Tool": "lemon_skills.tool",
    "ToolContext": "lemon_skills.tool",
    "ToolResult": "lemon_skills.tool",
    "ToolRegistry": "lemon_skills.tools.registry",
    "read_skill": "lemon_skills.tools.read",
    "skill_manage": "lemon_skills.tools.manage",
    "McpSource": "lemon_skills.mcp.source",
    # process settings and errors
    "configure": "lemon_skills.settings",
    "LemonSkillsError": "lemon_skills.errors",
    "SkillNotFound": "lemon_skills.errors",
}

__getattr__ = lazy_getattr(__name__, _API, globals())

__all__ = sorted(_API)
