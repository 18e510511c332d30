"""lemon's skills and MCP tools as a PydanticAI capability.

    from pydantic_ai import Agent
    from lemon_skills.integrations.pydantic_ai import capability

    agent = Agent(model, capabilities=[capability(cwd=project)])

Importing this module imports ``pydantic_ai`` (``pip install 'lemon-skills[pydantic-ai]'``);
``import lemon_skills`` never does. What it plugs into:

* instructions: a dynamic instruction (a function of the ``RunContext``) that is the skills
  block for the run's prompt (``Lemon.turn``);
* tools: one toolset holding ``read_skill`` (``skill_manage`` with ``skill_manage=True``) and
  every MCP tool; the ones lemon did not choose for the request are marked ``defer_loading``,
  and PydanticAI's own ``ToolSearch`` capability hides them behind its ``search_tools`` tool
  with lemon's ranker as its strategy, so a found tool is revealed on the next step the way
  PydanticAI reveals any deferred tool (natively on providers that have tool search);
* approvals: a call lemon's policy wants approved raises ``ApprovalRequired``, so the run ends
  with ``DeferredToolRequests`` (``output_type=[str, DeferredToolRequests]``); resumed with
  ``DeferredToolResults(approvals={id: True})`` the call runs once, with ``ToolDenied`` (or
  False) it never reaches the server and the model reads the denial;
* results: text (spill notices included), images as ``BinaryContent``, MCP errors as
  ``ToolFailed`` (the model sees the failure; the run goes on).

The MCP connections open when the agent's toolsets are entered (``async with agent:``, or each
run) and close with the last exit; ``options`` are ``integrations.turn.Options``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import (
        AbstractCapability,
        Capability,
        CombinedCapability,
        ToolSearch,
    )
    from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
    from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_ai.toolsets.external import TOOL_SCHEMA_VALIDATOR
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "lemon_skills.integrations.pydantic_ai needs PydanticAI: "
        "pip install 'lemon-skills[pydantic-ai]'"
    ) from exc

from lemon_skills.integrations.results import reply
from lemon_skills.integrations.turn import Lemon, Turn
from lemon_skills.paths import PathArg
from lemon_skills.tool import Tool, ToolContext
from lemon_skills.tools.deferred import TOOL_SEARCH

#: The capability's id (and its toolset's): one lemon per agent.
ID = "lemon"
#: Tools one query of PydanticAI's tool search may reveal (its ``ToolSearch.max_results``).
SEARCH_LIMIT = 10


def capability(
    cwd: PathArg = None, *, lemon: Lemon | None = None, **options: Any
) -> AbstractCapability[Any]:
    """A capability giving an agent lemon's skills and MCP tools for ``cwd``.

    ``options`` are ``integrations.turn.Options`` (``budget``, ``tool_mode``, ``max_tools``,
    ``skill_manage``, ``agent``, ...); ``lemon`` is a ``Lemon`` to share instead.
    """
    core = lemon if lemon is not None else Lemon(cwd, **options)
    toolset = LemonToolset(core)

    async def instructions(ctx: RunContext[Any]) -> str:
        return (await core.turn(request_of(ctx))).instructions

    def search(
        ctx: RunContext[Any], queries: Sequence[str], tools: Sequence[ToolDefinition]
    ) -> list[str]:
        allowed = {t.name for t in tools}
        names: list[str] = []
        for query in queries:
            names += [
                t.name
                for t in core.rank(query, SEARCH_LIMIT)
                if t.name in allowed and t.name not in names
            ]
        return names

    return CombinedCapability(
        [
            Capability(instructions=instructions, toolsets=[toolset], id=ID),
            ToolSearch(strategy=search),
        ]
    )


class LemonToolset(AbstractToolset[Any]):
    """``read_skill`` and the MCP tools; those not chosen for the request are deferred."""

    def __init__(self, lemon: Lemon) -> None:
        self.lemon = lemon
        self._built: tuple[Turn, dict[str, ToolsetTool[Any]]] | None = None

    @property
    def id(self) -> str | None:
        return ID

    async def __aenter__(self) -> LemonToolset:
        await self.lemon.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        await self.lemon.__aexit__(*args)
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        turn = await self.lemon.turn(request_of(ctx))
        built = self._built
        if built is not None and built[0] is turn:
            return built[1]
        sent = {t.name for t in turn.tools}
        tools = [t for t in turn.tools if t.name != TOOL_SEARCH]
        tools += [t for name, t in turn.mcp.items() if name not in sent]
        out = {t.name: self._tool(t, defer=t.name not in sent) for t in tools}
        self._built = (turn, out)
        return out

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        approved = ctx.tool_call_approved
        if not approved and self.lemon.needs_approval(name):
            raise ApprovalRequired
        context = ToolContext(cwd=self.lemon.cwd, tool_call_id=ctx.tool_call_id, run_id=ctx.run_id)
        out = reply(await self.lemon.call(name, tool_args, approved=approved, ctx=context))
        if out.is_error:
            raise ToolFailed(out.text)
        if not out.images:
            return out.text
        return [out.text, *(BinaryContent(i.data, media_type=i.media_type) for i in out.images)]

    def _tool(self, tool: Tool, *, defer: bool) -> ToolsetTool[Any]:
        definition = ToolDefinition(
            name=tool.name,
            description=tool.description,
            parameters_json_schema=dict(tool.parameters),
            defer_loading=defer,
        )
        return ToolsetTool(
            toolset=self, tool_def=definition, max_retries=1, args_validator=TOOL_SCHEMA_VALIDATOR
        )


def request_of(ctx: RunContext[Any]) -> str:
    """The user's request: the run's prompt, else (a resumed run) the last user prompt."""
    prompt = ctx.prompt
    if prompt is None:
        for message in reversed(ctx.messages):
            if isinstance(message, ModelRequest):
                parts = [p for p in message.parts if isinstance(p, UserPromptPart)]
                if parts:
                    prompt = parts[-1].content
                    break
    if isinstance(prompt, str):
        return prompt
    return " ".join(p for p in prompt or () if isinstance(p, str))
