"""lemon's approval policy for an MCP call, decided without waiting, and the call itself.

``needs_approval`` reads the catalogue (the server's ``approve`` policy, ``approve_tools`` and
the tool's annotations, as ``McpSource.needs_approval`` applies them): no I/O, no approvals
store, so a framework pauses its run its own way. ``run`` then calls the tool once: with
``approved`` it goes straight to the server; without, a call that needs approval is refused
here and never reaches the server. Pinning needs no question: a tool withheld because it
changed since pinned is not in the catalogue, so it can be neither offered nor called.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lemon_skills.paths import PathArg
from lemon_skills.tool import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from lemon_skills.mcp.source import McpSource


def needs_approval(source: McpSource, tool: Tool, cwd: PathArg = None) -> bool:
    """Whether calling ``tool`` waits for a person; tools that are not MCP tools never do."""
    if tool.origin != "mcp":
        return False
    return bool(source.needs_approval(tool.name, cwd))


def rejected(name: str, reason: str | None = None) -> ToolResult:
    """What the model reads when a person rejected the call (it was not run)."""
    why = f": {reason}" if reason else ""
    return ToolResult.error(f"The call to {name} was rejected and was not run{why}.")


async def run(
    source: McpSource,
    tool: Tool,
    args: Mapping[str, Any] | None,
    *,
    approved: bool,
    ctx: ToolContext | None = None,
    cwd: PathArg = None,
) -> ToolResult:
    """Call the MCP ``tool`` once; arguments are validated first and every failure comes back
    as an error result. Without ``approved``, a call that needs approval is not run."""
    if not approved and needs_approval(source, tool, cwd):
        return ToolResult.error(
            f"{tool.name} needs approval and was not approved; it was not run.",
            needs_approval=True,
        )
    bound = dataclasses.replace(
        tool, handler=functools.partial(_invoke, source, tool.name, approved)
    )
    return await bound.acall(args, ctx)


async def _invoke(
    source: McpSource, name: str, approved: bool, params: dict[str, Any], ctx: ToolContext
) -> ToolResult:
    return await source.acall_tool(name, params, approved=approved)
