"""Skills and tools for one request in one budget: what a host sends the model this turn.

``render`` is ``lemon_skills.prompt.render`` (and ``lemon_skills.render_prompt``). Without
``tools`` it is the skills block alone (``skills.api.render_prompt``). With ``tools=True`` the
tool definitions to send are chosen first: the registry's ``search`` selection (tools that are
not MCP tools, pinned MCP tools, the MCP tools that fit the request, ``tool_search``), within
half the budget as ``estimate_tokens`` counts them (fewer ranked tools when it is tight). The
skills block gets the rest, so one call per turn gives a host both.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemon_skills.skills.api import render_prompt
from lemon_skills.skills.prompt import DEFAULT_BUDGET, RenderedPrompt

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

    ``options`` are ``skills.api.render_prompt``'s (``cwd``, ``max_results``, ``budget``,
    ``mode``, ``context``, ``files``, ``agent``). With ``tools`` the ``budget`` (characters,
    default ``DEFAULT_BUDGET``) covers both: the definitions' share, ``estimate_tokens`` x 4
    characters, is ``tool_chars`` and the skills block gets the rest; ``tools`` holds the
    ``Tool`` objects to export (``to_openai``, ``to_anthropic``). ``registry`` defaults to a
    ``ToolRegistry()`` over the configured MCP servers (discovered, so started, on first use);
    ``max_tools`` to ``tools.deferred.DEFAULT_TOP_K``.

    Raises:
        ConfigError: ``agent`` has no profile in skills.json.
    """
    if not tools:
        return render_prompt(request, **options)
    # Imported here: a skills-only render does not load the tool layer and its JSON Schema
    # validator.
    from lemon_skills.tool import CHARS_PER_TOKEN
    from lemon_skills.tools.deferred import DEFAULT_TOP_K, tool_tokens
    from lemon_skills.tools.registry import ToolRegistry

    if max_tools is None:
        max_tools = DEFAULT_TOP_K
    budget = options.pop("budget", None) or DEFAULT_BUDGET
    reg = registry if registry is not None else ToolRegistry()
    chosen = _tools_within(reg, request, options.get("cwd"), max_tools, budget)
    cost = tool_tokens(chosen.tools) * CHARS_PER_TOKEN
    block = render_prompt(request, budget=max(0, budget - cost), **options)
    return dataclasses.replace(block, budget=budget, tools=chosen.tools, tool_chars=cost)


def _tools_within(
    registry: ToolRegistry, request: str, cwd: str | Path | None, top_k: int, budget: int
) -> ToolSelection:
    """The search selection with as many ranked tools (up to ``top_k``) as fit."""
    from lemon_skills.tool import CHARS_PER_TOKEN
    from lemon_skills.tools.deferred import tool_tokens

    limit = budget * TOOL_SHARE
    while True:
        chosen = registry.select_tools(cwd, request=request, mode="search", top_k=top_k)
        if top_k <= 0 or tool_tokens(chosen.tools) * CHARS_PER_TOKEN <= limit:
            return chosen
        top_k -= 1
