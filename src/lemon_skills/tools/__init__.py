"""Framework-neutral agent tools, their exporters and the tool registry."""

from __future__ import annotations

from .base import Tool, ToolContext, ToolResult, to_anthropic, to_openai
from .registry import ConflictReport, ToolConflict, ToolRegistry

__all__ = [
    "ConflictReport",
    "Tool",
    "ToolConflict",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "to_anthropic",
    "to_openai",
]
