"""Framework-neutral agent tools, their exporters and the tool registry.

``read_skill`` and ``skill_manage`` are ready-made ``Tool`` objects; pass a ``ToolContext``
with the project ``cwd`` and the run/session ids telemetry should carry. Names are imported on
first use, so a module of this package (the MCP skill source the registry loads) costs only
itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.tool import (
        ExcludedTool,
        Tool,
        ToolContext,
        ToolResult,
        export_tools,
        to_anthropic,
        to_gemini,
        to_openai,
    )
    from lemon_skills.tools.manage import skill_manage
    from lemon_skills.tools.read import read_skill
    from lemon_skills.tools.registry import ConflictReport, ToolConflict, ToolRegistry

_API = {
    "ConflictReport": "lemon_skills.tools.registry",
    "ExcludedTool": "lemon_skills.tool",
    "Tool": "lemon_skills.tool",
    "ToolConflict": "lemon_skills.tools.registry",
    "ToolContext": "lemon_skills.tool",
    "ToolRegistry": "lemon_skills.tools.registry",
    "ToolResult": "lemon_skills.tool",
    "export_tools": "lemon_skills.tool",
    "read_skill": "lemon_skills.tools.read",
    "skill_manage": "lemon_skills.tools.manage",
    "to_anthropic": "lemon_skills.tool",
    "to_gemini": "lemon_skills.tool",
    "to_openai": "lemon_skills.tool",
}

__getattr__ = lazy_getattr(__name__, _API, globals())

__all__ = sorted(_API)
