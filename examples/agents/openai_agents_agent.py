"""An OpenAI Agents SDK agent with lemon's skills and MCP tools, runnable offline.

    pip install 'lemon-skills[openai-agents]'
    python examples/agents/openai_agents_agent.py [PROJECT] [--mcp]

PROJECT defaults to a throwaway project holding one skill. The model is the SDK's
``ScriptedModel`` (``agents.testing``), scripted to read the skill lemon put in its
instructions and answer, so nothing leaves the machine; drop ``model=`` to use a real one.
``--mcp`` also starts the MCP servers configured for the project (off by default here).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from _demo import REQUEST, demo_args
from agents import Agent, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from lemon_skills.integrations.openai_agents import aagent_options
from lemon_skills.integrations.turn import Lemon


def read(call: ModelCall) -> Any:
    print(f"instructions: {len(call.system_instructions or '')} characters")
    print("tools sent:", ", ".join(t.name for t in call.tools))
    return [function_call("read_skill", {"key": "release-notes"}, call_id="c1")]


def answer(call: ModelCall) -> Any:
    skill = [i for i in call.input if i.get("type") == "function_call_output"][-1]["output"]
    return [assistant_message("Following the skill:\n" + str(skill).splitlines()[-1])]


async def main(project: Path, mcp: bool) -> None:
    lemon = Lemon(project, mcp=mcp)
    model = ScriptedModel([ModelStep.respond(read), ModelStep.respond(answer)])
    agent = Agent(name="assistant", model=model, **await aagent_options(lemon=lemon))
    try:
        result = await Runner.run(agent, REQUEST, run_config=RunConfig(tracing_disabled=True))
        print(result.final_output)
    finally:
        await lemon.aclose()  # stops the MCP servers it started


if __name__ == "__main__":
    asyncio.run(main(*demo_args(sys.argv[1:])))
