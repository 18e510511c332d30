"""Skills and tools for one request in one budget: what a host sends the model this turn.

``render`` is ``lemon_skills.prompt.render`` (and ``lemon_skills.render_prompt``). Without
``tools`` it is the skills block alone (``skills.selection.offer.render_prompt``). With
``tools=True`` the tool definitions to send are chosen first: the registry's ``search``
selection (tools that are not MCP tools, pinned MCP tools, the MCP tools that fit the request,
``tool_search``), within half the budget as ``estimate_tokens`` counts them (fewer ranked tools
when it is tight). The skills block gets the rest, so one call per turn gives a host both.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from lemon_skills.skills.prompt import DEFAULT_BUDGET, RenderedPrompt
from lemon_skills.skills.selection.offer import render_prompt

if TYPE_CHECKING:
    from lemon_skills.tools.deferred import ToolSelection
    from lemon_skills.tools.registry import ToolRegistry

#: Share of the budget tool definitions may take; the skills block keeps the rest.
TOOL_SHARE = 0.5


def render(
    request: str,
    *,
    tools: bool = False,
    max_tools: int | None = None,
    registry: ToolRegistry | None = None,
    **options: Any,
) -> RenderedPrompt:
    """The system-prompt block for ``request`` and, with ``tools``, the tools to send.

    ``options`` are ``skills.selection.offer.render_prompt``'s (``cwd``, ``max_results``,
    ``budget``, ``mode``, ``context``, ``files``, ``agent``). With ``tools`` the ``budget``
    (characters, default ``DEFAULT_BUDGET``) covers both: the definitions' share,
    ``estimate_tokens`` x 4 characters, is ``tool_chars`` and the skills block gets the rest;
    ``tools`` holds the ``Tool`` objects to export (``to_openai``, ``to_anthropic``).
    ``registry`` defaults to a ``ToolRegistry()`` over the configured MCP servers (discovered,
    so started, on first use); ``max_tools`` to ``tools.deferred.DEFAULT_TOP_K``.

    Raises:
        ConfigError: ``agent`` has no profile in skills.json.
    """
    if not tools:
        return render_prompt(request, **options)
    reg, top_k, budget = _tool_ask(registry, max_tools, options)
    cwd = options.get("cwd")
    while True:
        chosen = reg.select_tools(cwd, request=request, mode="search", top_k=top_k)
        if _fits(chosen, top_k, budget):
            return _with_tools(request, chosen, budget, options)
        top_k -= 1


async def arender(
    request: str,
    *,
    tools: bool = False,
    max_tools: int | None = None,
    registry: ToolRegistry | None = None,
    **options: Any,
) -> RenderedPrompt:
    """``render`` from async code: MCP discovery is awaited, never run on a blocked loop
    (inside ``async with McpSource()``, where the synchronous ``render`` cannot reach it)."""
    if not tools:
        return render_prompt(request, **options)
    reg, top_k, budget = _tool_ask(registry, max_tools, options)
    cwd = options.get("cwd")
    while True:
        chosen = await reg.aselect_tools(cwd, request=request, mode="search", top_k=top_k)
        if _fits(chosen, top_k, budget):
            return _with_tools(request, chosen, budget, options)
        top_k -= 1


def _tool_ask(
    registry: ToolRegistry | None, max_tools: int | None, options: dict[str, Any]
) -> tuple[ToolRegistry, int, int]:
    # Imported here: a skills-only render does not load the tool layer and its JSON Schema
    # validator.
    from lemon_skills.tools.deferred import DEFAULT_TOP_K
    from lemon_skills.tools.registry import ToolRegistry

    budget = options.pop("budget", None) or DEFAULT_BUDGET
    reg = registry if registry is not None else ToolRegistry()
    return reg, DEFAULT_TOP_K if max_tools is None else max_tools, budget


def _fits(chosen: ToolSelection, top_k: int, budget: int) -> bool:
    """Whether the search selection fits its share (fewer ranked tools are tried until it does)."""
    return top_k <= 0 or _cost(chosen) <= budget * TOOL_SHARE


def _cost(chosen: ToolSelection) -> int:
    from lemon_skills.tool import CHARS_PER_TOKEN
    from lemon_skills.tools.deferred import tool_tokens

    return tool_tokens(chosen.tools) * CHARS_PER_TOKEN


def _with_tools(
    request: str, chosen: ToolSelection, budget: int, options: dict[str, Any]
) -> RenderedPrompt:
    cost = _cost(chosen)
    block = render_prompt(request, budget=max(0, budget - cost), **options)
    return dataclasses.replace(block, budget=budget, tools=chosen.tools, tool_chars=cost)
