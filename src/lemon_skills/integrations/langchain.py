"""lemon's skills and MCP tools inside a LangChain agent, through one middleware.

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from lemon_skills.integrations.langchain import middleware

    agent = create_agent(model, middleware=[middleware(cwd=project)], checkpointer=InMemorySaver())

On every model call the middleware's ``wrap_model_call`` adds the skills block for the user's
latest message to the system prompt and replaces lemon's tools in the request with this turn's:
``read_skill`` (and ``skill_manage``), the MCP tools chosen for the request and ``tool_search``.
A tool ``tool_search`` found (its ``ToolMessage.artifact`` names it) is offered from the next
model call on. ``wrap_tool_call`` runs those tools, which ``create_agent`` never saw. The
middleware is async-native: run the agent with ``ainvoke`` / ``astream``.

A call lemon's policy holds for a person (the server's ``approve`` / ``approve_tools``, the
tool's annotations) goes through LangChain's own ``HumanInTheLoopMiddleware`` in ``per_call``
mode: the run pauses with a ``tool_approval`` interrupt and resumes with
``Command(resume={interrupt_id: {"type": "approve" | "edit" | "reject", ...}})``. Approved, it
runs once without asking lemon's approvals store; rejected, it never reaches the server and the
model reads why. Pausing needs a checkpointer, as for ``HumanInTheLoopMiddleware``.
"""

from __future__ import annotations

import base64
import contextvars
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal

from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import ModelCallResult, ToolCallRequest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.types import Command

from lemon_skills.integrations import results
from lemon_skills.integrations.turn import Lemon, Turn
from lemon_skills.paths import PathArg
from lemon_skills.tool import Tool
from lemon_skills.tools.deferred import TOOL_SEARCH

__all__ = ["LemonMiddleware", "middleware"]

Decision = Literal["approve", "edit", "reject", "respond"]
DEFAULT_DECISIONS: tuple[Decision, ...] = ("approve", "edit", "reject")
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]

#: Set while the tool call a reviewer approved runs (LangChain runs the tool in this context).
_APPROVED: contextvars.ContextVar[bool] = contextvars.ContextVar("lemon_lc_approved", default=False)


def middleware(
    cwd: PathArg = None,
    *,
    allowed_decisions: Iterable[Decision] = DEFAULT_DECISIONS,
    **options: Any,
) -> LemonMiddleware:
    """The middleware for ``create_agent(model, middleware=[...])``.

    ``options`` are ``integrations.turn.Options``' (``tool_mode``, ``max_tools``, ``budget``,
    ``skill_manage``, ``agent``...). ``allowed_decisions`` are the answers a reviewer may give
    to a held call.
    """
    return LemonMiddleware(Lemon(cwd, **options), allowed_decisions=allowed_decisions)


class LemonMiddleware(AgentMiddleware):
    """Skills block, lemon's tools and lemon's approval policy for each model and tool call."""

    def __init__(
        self, lemon: Lemon, *, allowed_decisions: Iterable[Decision] = DEFAULT_DECISIONS
    ) -> None:
        super().__init__()
        self.lemon = lemon
        self.allowed_decisions: list[Decision] = list(allowed_decisions)
        self._converted: dict[str, tuple[Tool, BaseTool]] = {}
        self._reviewers: dict[str, HumanInTheLoopMiddleware] = {}
        self.tools: list[BaseTool] = []

    @property
    def name(self) -> str:
        return "LemonMiddleware"

    # -- model calls -------------------------------------------------------------------

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelCallResult:
        asked, found = _asked(request.messages)
        turn = await self.lemon.turn(asked, found=found)
        return await handler(self._with_turn(request, turn))

    def _with_turn(self, request: ModelRequest, turn: Turn) -> ModelRequest:
        offered = [self._convert(t) for t in turn.tools]
        mine = {t.name for t in offered} | set(turn.mcp) | {TOOL_SEARCH}
        theirs = [t for t in request.tools if _tool_name(t) not in mine]
        system = "\n\n".join(p for p in (request.system_prompt, turn.instructions) if p)
        return request.override(
            system_message=SystemMessage(content=system) if system else None,
            tools=[*theirs, *offered],
        )

    # -- tool calls --------------------------------------------------------------------

    async def awrap_tool_call(self, request: ToolCallRequest, handler: AsyncToolHandler) -> Any:
        name = request.tool_call["name"]
        tool = await self._tool(name)
        if tool is None:
            return await handler(request)
        request = request.override(tool=tool)
        if not self.lemon.needs_approval(name):
            return await handler(request)

        async def run(approved: ToolCallRequest) -> ToolMessage | Command[Any]:
            token = _APPROVED.set(True)
            try:
                return await handler(approved)
            finally:
                _APPROVED.reset(token)

        return await self._reviewer(name).awrap_tool_call(request, run)

    async def _tool(self, name: str) -> BaseTool | None:
        """The LangChain tool for ``name`` if lemon offers it; found again without a model
        call first when a run resumes in a new process straight into its tool call."""
        hit = self._converted.get(name)
        if hit is not None:
            return hit[1]
        turn = await self.lemon.turn("", found=[name])
        found = turn.tool(name) or turn.mcp.get(name)
        return self._convert(found) if found is not None else None

    def _reviewer(self, name: str) -> HumanInTheLoopMiddleware:
        """LangChain's own reviewer for ``name``: its interrupt, decisions and messages."""
        reviewer = self._reviewers.get(name)
        if reviewer is None:
            config = InterruptOnConfig(
                allowed_decisions=list(self.allowed_decisions),
                description=(
                    f"lemon's policy holds {name} for review: its MCP server asks for approval "
                    "of calls that are not annotated as safe to run unattended."
                ),
            )
            reviewer = HumanInTheLoopMiddleware({name: config}, interrupt_mode="per_call")
            self._reviewers[name] = reviewer
        return reviewer

    def _convert(self, tool: Tool) -> BaseTool:
        hit = self._converted.get(tool.name)
        if hit is None or hit[0] is not tool:
            hit = self._converted[tool.name] = (tool, as_langchain_tool(tool, self.lemon))
        return hit[1]

    async def __aenter__(self) -> LemonMiddleware:
        """Keep the MCP connections open in this event loop while the agent runs (else they
        open on first use on a private loop and ``aclose()`` stops them)."""
        await self.lemon.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.lemon.__aexit__(*exc)

    async def aclose(self) -> None:
        """Stop the MCP servers this middleware started without ``async with``."""
        await self.lemon.aclose()


def as_langchain_tool(tool: Tool, lemon: Lemon) -> BaseTool:
    """``tool`` as a LangChain tool run through ``lemon.call``: text (and images) for the
    model, lemon's details as the artifact, failures as error ``ToolMessage``s."""

    async def arun(**kwargs: Any) -> tuple[Any, dict[str, Any]]:
        result = await lemon.call(tool.name, kwargs, approved=_APPROVED.get())
        parts = results.reply(result)
        if parts.is_error:
            raise ToolException(parts.text)
        if not parts.images:
            return parts.text, dict(result.details)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": parts.text}] if parts.text else []
        blocks += [
            {"type": "image", "base64": _b64(i.data), "mime_type": i.media_type}
            for i in parts.images
        ]
        return blocks, dict(result.details)

    return StructuredTool.from_function(
        coroutine=arun,
        name=tool.name,
        description=tool.description,
        args_schema=dict(tool.parameters),
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _asked(messages: Sequence[BaseMessage]) -> tuple[str, list[str]]:
    """The user's latest request and the tools ``tool_search`` found so far in the run."""
    asked = ""
    found: list[str] = []
    for m in messages:
        if isinstance(m, HumanMessage) and m.text.strip():
            asked = m.text
        elif isinstance(m, ToolMessage) and m.name == TOOL_SEARCH and isinstance(m.artifact, dict):
            found += [n for n in m.artifact.get("names", ()) if isinstance(n, str)]
    return asked, found


def _tool_name(tool: BaseTool | dict[str, Any]) -> str | None:
    if isinstance(tool, BaseTool):
        return tool.name
    name = tool.get("name") or tool.get("function", {}).get("name")
    return name if isinstance(name, str) else None
