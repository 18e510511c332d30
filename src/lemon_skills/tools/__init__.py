"""Framework-neutral agent tools, their exporters and the tool registry.

``read_skill`` and ``skill_manage`` are ready-made ``Tool`` objects; pass a ``ToolContext``
with the project ``cwd`` and the run/session ids telemetry should carry.
"""

from __future__ import annotations

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
from lemon_skills.tools.read_skill import read_skill
from lemon_skills.tools.registry import ConflictReport, ToolConflict, ToolRegistry
from lemon_skills.tools.skill_manage import skill_manage

__all__ = [
    "ConflictReport",
    "ExcludedTool",
    "Tool",
    "ToolConflict",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "export_tools",
    "read_skill",
    "skill_manage",
    "to_anthropic",
    "to_gemini",
    "to_openai",
]
