"""Framework-neutral agent tools and their exporters."""

from __future__ import annotations

from .base import Tool, ToolContext, ToolResult, to_anthropic, to_openai

__all__ = ["Tool", "ToolContext", "ToolResult", "to_anthropic", "to_openai"]
