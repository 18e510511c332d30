"""lemon's skills and MCP tools inside a LangChain agent, through one middleware.

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from lemon_skills.integrations.langchain import middleware

    agent = create_agent(model, middleware=[middleware(cwd=project)], checkpointer=InMemorySaver())

On every model call the middleware's ``wrap_model_call`` adds the skills block for the user's
latest message to the system prompt and replaces lemon's tools in the request with this turn's:
``read_skill`` (and ``skill_manage``), the MCP tools chosen for the request and ``tool_search``.
A tool ``tool_search`` found (its ``ToolMessage.artifact`` names it) is offered from the next
model call on. ``wrap_tool_call`` runs those tools, which ``create_agent`` never saw.

A call lemon's policy holds for a person (the server's ``approve`` / ``approve_tools``, the
tool's annotations) goes through LangChain's own ``HumanInTheLoopMiddleware`` in ``per_call``
mode: the run pauses with a ``tool_approval`` interrupt and resumes with
``Command(resume={interrupt_id: {"type": "approve" | "edit" | "reject", ...}})``. Approved, it
runs once without asking lemon's approvals store; rejected, it never reaches the server and the
model reads why. Pausing needs a checkpointer, as for ``HumanInTheLoopMiddleware``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Literal

import anyio.to_thread
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

from lemon_skills.integrations.session import Session, Turn, latest_request
from lemon_skills.paths import PathArg
from lemon_skills.tool import Tool, ToolContext, ToolResult
from lemon_skills.tools.deferred import TOOL_SEARCH

__all__ = ["LemonMiddleware", "middleware"]

Decision = Literal["approve", "edit", "reject", "respond"]
ToolHandler = Callable[[ToolCallRequest], ToolMessage | Command[Any]]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


def middleware(
    cwd: PathArg = None,
    *,
    allowed_decisions: Iterable[Decision] = ("approve", "edit", "reject"),
    **options: Any,
) -> LemonMiddleware:
    """The middleware for ``create_agent(model, middleware=[...])``.

    ``options`` are ``integrations.session.Session``'s: ``tools`` (``auto``/``all``/
    ``search``), ``max_tools``, ``context_tokens``, ``skill_manage``, ``budget``, ``agent``,
    ``servers``. ``allowed_decisions`` are what a reviewer may answer to a held call.
    """
    return LemonMiddleware(Session(cwd, **options), allowed_decisions=allowed_decisions)


class LemonMiddleware(AgentMiddleware):
    """Skills block, lemon's tools and lemon's approval policy for each model and tool call."""

    def __init__(
        self, session: Session, *, allowed_decisions: Iterable[Decision] = ("approve", "reject")
    ) -> None:
        super().__init__()
        self.session = session
        self.allowed_decisions: list[Decision] = list(allowed_decisions)
        self._converted: dict[int, BaseTool] = {}
        self._offered: dict[str, BaseTool] = {}
        self._reviewers: dict[str, HumanInTheLoopMiddleware] = {}
        self.tools = [self._convert(t) for t in session.builtins]

    @property
    def name(self) -> str:
        return "LemonMiddleware"

    # -- model calls -------------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelCallResult:
        turn = self.session.turn(*_asked(request.messages))
        return handler(self._with_turn(request, turn))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelCallResult:
        turn = await self.session.aturn(*_asked(request.messages))
        return await handler(self._with_turn(request, turn))

    def _with_turn(self, request: ModelRequest, turn: Turn) -> ModelRequest:
        offered = [self._convert(t) for t in turn.tools]
        self._offered.update((t.name, t) for t in offered)
        mine = set(self._offered)
        theirs = [t for t in request.tools if _tool_name(t) not in mine]
        system = "\n\n".join(p for p in (request.system_prompt, turn.system) if p)
        return request.override(
            system_message=SystemMessage(content=system) if system else None,
            tools=[*theirs, *offered],
        )

    # -- tool calls --------------------------------------------------------------------

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> Any:
        name = request.tool_call["name"]
        tool = self._offered.get(name) or self._lookup(name)
        if tool is None:
            return handler(request)
        request = request if request.tool is not None else request.override(tool=tool)
        if not self.session.needs_approval(name):
            return handler(request)

        def run(approved: ToolCallRequest) -> ToolMessage | Command[Any]:
            call = approved.tool_call
            with self.session.granted(call["name"], call["args"]):
                return handler(approved)

        return self._reviewer(name).wrap_tool_call(request, run)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: AsyncToolHandler) -> Any:
        name = request.tool_call["name"]
        tool = self._offered.get(name) or await anyio.to_thread.run_sync(self._lookup, name)
        if tool is None:
            return await handler(request)
        request = request if request.tool is not None else request.override(tool=tool)
        if not self.session.needs_approval(name):
            return await handler(request)

        async def run(approved: ToolCallRequest) -> ToolMessage | Command[Any]:
            call = approved.tool_call
            with self.session.granted(call["name"], call["args"]):
                return await handler(approved)

        return await self._reviewer(name).awrap_tool_call(request, run)

    def _lookup(self, name: str) -> BaseTool | None:
        """A tool this middleware offers, found again without a model call first (a run
        resumed in a new process goes straight to its pending tool call)."""
        found = self.session.find_tool(name)
        if found is None:
            return None
        tool = self._convert(found)
        self._offered[name] = tool
        return tool

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

    # -- conversion --------------------------------------------------------------------

    def _convert(self, tool: Tool) -> BaseTool:
        done = self._converted.get(id(tool))
        if done is None or done.name != tool.name:
            done = self._converted[id(tool)] = as_langchain_tool(tool, self.session)
        return done

    def close(self) -> None:
        """Stop the MCP servers this middleware started."""
        self.session.close()


def as_langchain_tool(tool: Tool, session: Session) -> BaseTool:
    """``tool`` as a LangChain tool: content for the model, lemon's details as the artifact,
    failures as error ``ToolMessage``s (``handle_tool_error``), never exceptions."""
    ctx = ToolContext(cwd=session.cwd)

    def run(**kwargs: Any) -> tuple[Any, dict[str, Any]]:
        return _content(tool.call(kwargs, ctx))

    async def arun(**kwargs: Any) -> tuple[Any, dict[str, Any]]:
        return _content(await tool.acall(kwargs, ctx))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=tool.name,
        description=tool.description,
        args_schema=dict(tool.parameters),
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _content(result: ToolResult) -> tuple[Any, dict[str, Any]]:
    if result.is_error:
        raise ToolException(result.text or "the tool failed")
    images = [b for b in result.content if b.get("type") == "image" and b.get("data")]
    if not images:
        return result.text, dict(result.details)
    blocks: list[dict[str, Any]] = [{"type": "text", "text": result.text}] if result.text else []
    blocks += [
        {"type": "image", "base64": b["data"], "mime_type": b.get("mimeType", "image/png")}
        for b in images
    ]
    return blocks, dict(result.details)


def _asked(messages: list[BaseMessage]) -> tuple[str, list[str]]:
    """The user's latest request and the tools ``tool_search`` found so far."""
    texts = [m.text for m in messages if isinstance(m, HumanMessage)]
    found: list[str] = []
    for m in messages:
        if isinstance(m, ToolMessage) and m.name == TOOL_SEARCH and isinstance(m.artifact, dict):
            found += [n for n in m.artifact.get("names", ()) if isinstance(n, str)]
    return latest_request(texts), found


def _tool_name(tool: BaseTool | dict[str, Any]) -> str | None:
    if isinstance(tool, BaseTool):
        return tool.name
    name = tool.get("name") or tool.get("function", {}).get("name")
    return name if isinstance(name, str) else None
