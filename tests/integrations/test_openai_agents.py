"""The OpenAI Agents SDK adapter through the SDK's own runner, with its ``ScriptedModel``
standing in for the model and a real 362-tool stdio MCP server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "agents", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')"
)

from agents import Agent, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from lemon_skills.integrations.openai_agents import aagent_options, agent_options
from lemon_skills.integrations.turn import Lemon
from tests.integrations.conftest import DESTRUCTIVE, FOUND, REQUEST

NO_TRACES = RunConfig(tracing_disabled=True)


def outputs(call: ModelCall) -> list[str]:
    items = call.input if isinstance(call.input, list) else []
    return [
        str(i.get("output"))
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


def names(call: ModelCall) -> list[str]:
    return [t.name for t in call.tools]


def test_skills_search_and_a_found_tool_through_the_runner(project, big_server, invoice_skill):
    seen: list[ModelCall] = []

    def step(reply: Any) -> ModelStep:
        def respond(call: ModelCall) -> Any:
            seen.append(call)
            return [reply]

        return ModelStep.respond(respond)

    model = ScriptedModel(
        [
            step(function_call("read_skill", {"key": "invoice-chaser"}, call_id="c1")),
            step(
                function_call(
                    "tool_search", {"query": "send an invoice by email to a customer"}, call_id="c2"
                )
            ),
            step(function_call(FOUND, {"customer": "ACME", "amount": 120}, call_id="c3")),
            step(assistant_message("done")),
        ]
    )

    async def main() -> str:
        lemon = Lemon(project)
        agent = Agent(name="a", model=model, **await aagent_options(lemon=lemon))
        try:
            return str((await Runner.run(agent, REQUEST, run_config=NO_TRACES)).final_output)
        finally:
            await lemon.aclose()

    assert asyncio.run(main()) == "done"
    first = seen[0]
    assert "invoice-chaser" in (first.system_instructions or "")
    assert "read_skill" in names(first) and "tool_search" in names(first)
    assert len(names(first)) <= 30 and FOUND not in names(first)
    assert "Send a reminder" in outputs(seen[1])[0]
    assert FOUND in outputs(seen[2])[-1]
    assert FOUND in names(seen[2])  # found by the search, offered on the next call
    assert outputs(seen[3])[-1] == "invoice of 120 EUR sent to ACME"


def approval_run(project: Path, approve: bool) -> list[str]:
    seen: list[ModelCall] = []

    def final(call: ModelCall) -> Any:
        seen.append(call)
        return [assistant_message("finished")]

    def first(call: ModelCall) -> Any:
        assert DESTRUCTIVE in names(call)
        return [function_call(DESTRUCTIVE, {"table": "users"}, call_id="c1")]

    model = ScriptedModel([ModelStep.respond(first), ModelStep.respond(final)])
    lemon = Lemon(project)
    agent = Agent(name="a", model=model, **agent_options(lemon=lemon))  # from sync code

    async def main() -> None:
        paused = await Runner.run(
            agent, "erase every record of the users table permanently", run_config=NO_TRACES
        )
        assert [i.name for i in paused.interruptions] == [DESTRUCTIVE]
        state = paused.to_state()
        for item in paused.interruptions:
            if approve:
                state.approve(item)
            else:
                state.reject(item)
        done = await Runner.run(agent, state, run_config=NO_TRACES)
        assert done.final_output == "finished"
        await lemon.aclose()

    asyncio.run(main())
    return outputs(seen[0])


def test_a_destructive_call_pauses_and_never_runs_when_rejected(project, big_server: Path):
    told = approval_run(project, approve=False)
    assert not big_server.exists()
    assert told == ["Tool execution was not approved."]  # the SDK's words to the model


def test_a_destructive_call_runs_once_when_approved(project, big_server: Path):
    told = approval_run(project, approve=True)
    assert big_server.read_text() == "erased users\n"
    assert told[-1] == "erased users"


def test_the_options_are_plain_agent_keywords(project, big_server):
    options = agent_options(cwd=project, tool_mode="all")
    assert set(options) == {"instructions", "tools"}
    assert len(options["tools"]) == 2 + 362
    assert json.dumps([t.params_json_schema for t in options["tools"]])
