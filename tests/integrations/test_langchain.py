"""The LangChain middleware through LangChain's own agent loop (``create_agent``) with a scripted
chat model: what the model is sent each call, what lemon's tools return, tool search across
turns, and approvals through LangChain's human-in-the-loop interrupt."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("langchain.agents", reason="LangChain is not installed (extra: langchain)")

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field

from lemon_skills.integrations.langchain import LemonMiddleware, middleware
from tests.integrations.conftest import DESTRUCTIVE, FOUND, REQUEST
from tests.integrations.scenario import (
    FOUND_ARGS,
    FOUND_TEXT,
    SEARCH,
    SKILL,
    SKILL_TEXT,
    UNRELATED,
    drops,
)

Step = Callable[[list[BaseMessage]], AIMessage]


class ScriptedChat(BaseChatModel):
    """A chat model that answers each call with the next scripted step and records what it
    was sent (system prompt, tool names)."""

    steps: list[Step]
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        system = next((m.text for m in messages if isinstance(m, SystemMessage)), "")
        names = [t["function"]["name"] for t in kwargs.get("tools", [])]
        self.calls.append({"system": system, "tools": names, "messages": list(messages)})
        reply = self.steps[len(self.calls) - 1](messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def call(name: str, args: dict[str, Any], n: int = 1) -> Step:
    return lambda _m: AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{n}"}])


def say(text: str) -> Step:
    return lambda _m: AIMessage(text)


def last_tool_message(messages: list[BaseMessage]) -> ToolMessage:
    return next(m for m in reversed(messages) if isinstance(m, ToolMessage))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def world(big_server, invoice_skill) -> Path:
    """The 362-tool server and the skill; the marker file its destructive tool writes."""
    return big_server


@pytest.fixture
def lemon(project) -> Iterator[LemonMiddleware]:
    made = middleware(cwd=project)
    yield made
    anyio.run(made.aclose)


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.mark.anyio
async def test_skill_named_in_the_system_prompt_and_read_skill_returns_it(world, lemon):
    model = ScriptedChat(steps=[call("read_skill", {"key": SKILL}), say("done")])
    agent = create_agent(model, middleware=[lemon])
    out = await agent.ainvoke(user(REQUEST))
    first = model.calls[0]
    assert SKILL in first["system"]
    assert "read_skill" in first["tools"]
    result = last_tool_message(out["messages"])
    assert result.name == "read_skill" and SKILL_TEXT in result.text
    assert out["messages"][-1].text == "done"


@pytest.mark.anyio
async def test_big_server_is_searched_not_sent_and_the_found_tool_runs_next_turn(world, lemon):
    model = ScriptedChat(
        steps=[
            call("tool_search", {"query": SEARCH}),
            call(FOUND, FOUND_ARGS, 2),
            say("sent"),
        ]  # fmt: skip
    )
    agent = create_agent(model, middleware=[lemon])
    out = await agent.ainvoke(user(UNRELATED))
    up_front = model.calls[0]["tools"]
    assert len(up_front) <= 30 and "tool_search" in up_front
    assert FOUND not in up_front
    assert FOUND in model.calls[1]["tools"]
    ran = last_tool_message(out["messages"])
    assert ran.name == FOUND and ran.text == FOUND_TEXT and ran.status == "success"


def approval_agent(lemon: LemonMiddleware) -> tuple[Any, ScriptedChat]:
    model = ScriptedChat(steps=[call(DESTRUCTIVE, {"table": "users"}), say("finished")])
    return create_agent(model, middleware=[lemon], checkpointer=InMemorySaver()), model


@pytest.mark.anyio
async def test_destructive_call_pauses_and_never_runs_when_rejected(world, lemon):
    agent, model = approval_agent(lemon)
    cfg = {"configurable": {"thread_id": "reject"}}
    paused = await agent.ainvoke(user("drop the users table"), cfg, version="v2")
    (pending,) = paused.interrupts
    assert pending.value["type"] == "tool_approval" and pending.value["name"] == DESTRUCTIVE
    assert drops(world) == []
    answer = {pending.id: {"type": "reject", "message": "keep the users"}}
    out = await agent.ainvoke(Command(resume=answer), cfg, version="v2")
    assert drops(world) == []
    told = last_tool_message(out.value["messages"])
    assert told.status == "error" and "keep the users" in told.text
    assert any(isinstance(m, ToolMessage) for m in model.calls[-1]["messages"])


@pytest.mark.anyio
async def test_destructive_call_runs_once_when_approved(world, lemon):
    agent, _model = approval_agent(lemon)
    cfg = {"configurable": {"thread_id": "approve"}}
    paused = await agent.ainvoke(user("drop the users table"), cfg, version="v2")
    (pending,) = paused.interrupts
    out = await agent.ainvoke(Command(resume={pending.id: {"type": "approve"}}), cfg, version="v2")
    assert drops(world) == ["erased users"]
    assert last_tool_message(out.value["messages"]).text == "erased users"


@pytest.mark.anyio
async def test_an_edited_call_runs_with_the_reviewers_arguments(world, project):
    async with middleware(cwd=project) as lemon:
        agent, _model = approval_agent(lemon)
        cfg = {"configurable": {"thread_id": "edit"}}
        paused = await agent.ainvoke(user("drop the users table"), cfg, version="v2")
        (pending,) = paused.interrupts
        edit = {"type": "edit", "edited_action": {"name": DESTRUCTIVE, "args": {"table": "logs"}}}
        out = await agent.ainvoke(Command(resume={pending.id: edit}), cfg, version="v2")
    assert drops(world) == ["erased logs"]
    assert "erased logs" in last_tool_message(out.value["messages"]).text


@pytest.mark.anyio
async def test_images_come_back_as_image_blocks_and_failures_as_error_messages(world, lemon):
    model = ScriptedChat(
        steps=[call("mcp_big_render_chart", {}), call(FOUND, {"customer": "ACME"}, 2), say("ok")]
    )
    out = await create_agent(model, middleware=[lemon]).ainvoke(user("chart the invoices"))
    chart, bad = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    kinds = [b["type"] for b in chart.content if isinstance(b, dict)]
    assert kinds == ["text", "image"] and chart.status == "success"
    assert bad.status == "error" and "amount" in bad.text
