"""The PydanticAI capability through PydanticAI's own agent loop, with its ``FunctionModel``
standing in for the model and a real 362-tool stdio MCP server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pydantic_ai", reason="PydanticAI is not installed (pip install -e '.[pydantic-ai]')"
)

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lemon_skills.integrations.pydantic_ai import capability
from tests.integrations.conftest import DESTRUCTIVE, FOUND, REQUEST


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    return (
        [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if isinstance(last, ModelRequest)
        else []
    )


def test_skills_search_and_a_found_tool_through_the_agent_loop(project, big_server, invoice_skill):
    seen: list[dict[str, Any]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        names = [t.name for t in info.function_tools]
        seen.append(
            {"names": names, "instructions": info.instructions or "", "returns": returns(messages)}
        )
        step = len(seen)
        if step == 1:
            return ModelResponse(parts=[ToolCallPart("read_skill", {"key": "invoice-chaser"})])
        if step == 2:
            query = {"queries": ["send an invoice by email to a customer"]}
            return ModelResponse(parts=[ToolCallPart("search_tools", query)])
        if step == 3:
            args = {"customer": "ACME", "amount": 120}
            return ModelResponse(parts=[ToolCallPart(FOUND, args)])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), capabilities=[capability(cwd=project)])

    async def main() -> str:
        async with agent:
            return (await agent.run(REQUEST)).output

    assert asyncio.run(main()) == "done"
    first = seen[0]
    assert "invoice-chaser" in first["instructions"]
    assert "read_skill" in first["names"] and "search_tools" in first["names"]
    assert len(first["names"]) <= 30 and FOUND not in first["names"]
    assert "Send a reminder" in seen[1]["returns"][0].model_response_str()
    assert FOUND in seen[2]["names"]  # revealed by the search, callable on the next step
    assert seen[3]["returns"][0].content == "invoice of 120 EUR sent to ACME"


def approval_model(calls: list[str]) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        back = returns(messages)
        if back:
            calls.append(back[0].model_response_str())
            return ModelResponse(parts=[TextPart("finished")])
        assert DESTRUCTIVE in [t.name for t in info.function_tools]
        return ModelResponse(
            parts=[ToolCallPart(DESTRUCTIVE, {"table": "users"}, tool_call_id="c1")]
        )

    return FunctionModel(model)


def approval_run(project: Path, marker: Path, verdict: Any, *, keep_open: bool) -> list[str]:
    """Run until the destructive call pauses, check nothing ran, resume with ``verdict``;
    returns what the model was told. ``keep_open``: both runs inside ``async with agent``."""
    calls: list[str] = []
    agent = Agent(
        approval_model(calls),
        capabilities=[capability(cwd=project)],
        output_type=[str, DeferredToolRequests],
    )

    async def runs() -> None:
        paused = await agent.run("erase every record of the users table permanently")
        assert isinstance(paused.output, DeferredToolRequests)
        assert [c.tool_name for c in paused.output.approvals] == [DESTRUCTIVE]
        assert not marker.exists()
        done = await agent.run(
            message_history=paused.all_messages(),
            deferred_tool_results=DeferredToolResults(approvals={"c1": verdict}),
        )
        assert done.output == "finished"

    async def main() -> None:
        if keep_open:
            async with agent:
                await runs()
        else:
            await runs()

    asyncio.run(main())
    return calls


@pytest.mark.parametrize("verdict", [False, ToolDenied("not today")])
def test_a_destructive_call_pauses_and_never_runs_when_rejected(project, big_server: Path, verdict):
    calls = approval_run(project, big_server, verdict, keep_open=True)
    assert not big_server.exists()
    assert "denied" in calls[0] or "not today" in calls[0]


def test_a_destructive_call_runs_once_when_approved(project, big_server: Path):
    calls = approval_run(project, big_server, True, keep_open=False)
    assert big_server.read_text() == "erased users\n"
    assert calls == ["erased users"]


def test_concurrent_runs_share_one_agent_and_see_images(project, big_server):
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        back = returns(messages)
        if not back:
            return ModelResponse(parts=[ToolCallPart("mcp_big_render_chart", {"id": "s"})])
        content = back[0].content
        kinds = (
            [type(c).__name__ for c in content]
            if isinstance(content, list)
            else [type(content).__name__]
        )
        return ModelResponse(parts=[TextPart(",".join(kinds))])

    agent = Agent(FunctionModel(model), capabilities=[capability(cwd=project)])

    async def main() -> list[str]:
        # No `async with agent`: each run enters and leaves the toolset in a task of its own.
        runs = [agent.run("render a chart of the series as a png image") for _ in range(3)]
        return [r.output for r in await asyncio.gather(*runs)]

    for output in asyncio.run(main()):
        assert "BinaryContent" in output or "BinaryImage" in output


def test_an_mcp_error_is_a_tool_failure_the_model_reads(project, big_server):
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        back = returns(messages)
        if back:
            text = f"{back[0].outcome}: {back[0].model_response_str()}"
            return ModelResponse(parts=[TextPart(text)])
        return ModelResponse(parts=[ToolCallPart(FOUND, {"customer": "ACME"})])

    agent = Agent(FunctionModel(model), capabilities=[capability(cwd=project)])
    output = asyncio.run(agent.run("send an invoice by email to a customer")).output
    # A failed result the run goes on with, not an exception that ends it.
    assert output.startswith("failed:") and "'amount' is a required property" in output
