"""Deferred tool loading: which tool definitions the model is sent for one request.

``all`` sends every tool. ``search`` sends the tools that are not MCP tools (built-in, WASM,
extension), the MCP tools pinned by ``always_load``, the MCP tools ranked best for the
request, and ``tool_search``: a meta-tool the model calls with a query to get further tool
definitions, returned in the OpenAI and Anthropic formats for the host to load. ``auto`` is
``search`` when every definition together would take more than ``share`` of the context
``budget`` (tokens, as ``estimate_tokens`` counts them), else ``all``. Pure: the tools, the
pinned names and a ranking function in, a ``ToolSelection`` out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lemon_skills.errors import UsageError
from lemon_skills.tool import Tool, ToolContext, ToolResult, estimate_tokens

Mode = Literal["auto", "all", "search"]
MODES: tuple[Mode, ...] = ("auto", "all", "search")
#: ``auto`` defers MCP tools once all definitions would take more than this share of the budget.
DEFAULT_SHARE = 0.10
#: MCP tools sent up front in ``search`` mode (the best-ranked for the request).
DEFAULT_TOP_K = 5
TOOL_SEARCH = "tool_search"
#: Ranks the deferrable tools for a query: names, best first, at most ``limit``.
RankFn = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSelection:
    """The tools sent for one request and what was left for ``tool_search`` to find."""

    mode: Literal["all", "search"]
    tools: tuple[Tool, ...]
    deferred: tuple[str, ...]
    tokens_all: int
    tokens_sent: int
    budget: int | None

    def to_dict(self) -> dict[str, Any]:
        """JSON view (tool names, not definitions)."""
        return {
            "mode": self.mode,
            "tools": [t.name for t in self.tools],
            "deferred": list(self.deferred),
            "tokens_all": self.tokens_all,
            "tokens_sent": self.tokens_sent,
            "budget": self.budget,
        }


def tool_tokens(tools: Sequence[Tool]) -> int:
    """Estimated tokens of the definitions of ``tools`` (as the model receives them)."""
    return sum(estimate_tokens(t.to_anthropic()) for t in tools)


def select(
    tools: Sequence[Tool],
    *,
    deferrable: Sequence[str],
    pinned: Sequence[str],
    rank: RankFn,
    request: str | None,
    budget: int | None,
    mode: Mode,
    share: float = DEFAULT_SHARE,
    top_k: int = DEFAULT_TOP_K,
) -> ToolSelection:
    """Choose the definitions to send. ``deferrable`` are the names ``search`` may hold back
    (the MCP tools), ``pinned`` those of them always sent.

    Raises:
        UsageError: ``mode`` is not ``auto``, ``all`` or ``search``.
    """
    if mode not in MODES:
        raise UsageError(f"unknown tool mode {mode!r} (use auto, all or search)")
    total = tool_tokens(tools)
    movable = set(deferrable) - set(pinned)
    if mode == "auto":
        mode = "search" if budget is not None and total > share * budget else "all"
    if mode == "all" or not movable:
        return ToolSelection(
            mode="all",
            tools=tuple(tools),
            deferred=(),
            tokens_all=total,
            tokens_sent=total,
            budget=budget,
        )
    wanted = set(rank(request, top_k)) & movable if request and top_k > 0 else set()
    sent = [t for t in tools if t.name not in movable or t.name in wanted]
    by_name = {t.name: t for t in tools if t.name in movable}
    sent.append(tool_search_tool(lambda q, k: [by_name[n] for n in rank(q, k) if n in by_name]))
    return ToolSelection(
        mode="search",
        tools=tuple(sent),
        deferred=tuple(t.name for t in tools if t.name in movable and t.name not in wanted),
        tokens_all=total,
        tokens_sent=tool_tokens(sent),
        budget=budget,
    )


_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What the tool should do, in a few words (e.g. 'merge a pull request').",
        },
        "max_results": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "How many tools to return (default 5).",
        },
    },
    "required": ["query"],
}


def tool_search_tool(search: Callable[[str, int], Sequence[Tool]]) -> Tool:
    """The ``tool_search`` meta-tool over ``search(query, limit)``.

    Its result lists the matching tools' names and descriptions for the model; ``details``
    carries their full definitions in both formats (``openai``, ``anthropic``) and their
    ``names``, for the host to add to the next request.
    """

    def handler(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        found = list(search(str(params["query"]), int(params.get("max_results", DEFAULT_TOP_K))))
        details = {
            "names": [t.name for t in found],
            "openai": [t.to_openai() for t in found],
            "anthropic": [t.to_anthropic() for t in found],
        }
        if not found:
            return ToolResult("No tool matches that query; try other words.", details)
        lines = [json.dumps({"name": t.name, "description": t.description}) for t in found]
        head = f"{len(found)} tool(s) found; they can now be called:"
        return ToolResult("\n".join([head, *lines]), details)

    return Tool(
        name=TOOL_SEARCH,
        description=(
            "Search the tools that are available but not loaded yet (MCP servers' tools) and "
            "load the best matches. Call it when no loaded tool fits the task."
        ),
        parameters=_SCHEMA,
        handler=handler,
        label="Tool search",
        origin="builtin",
    )
