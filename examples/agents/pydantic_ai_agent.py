"""A PydanticAI agent with lemon's skills and MCP tools, runnable offline.

    pip install 'lemon-skills[pydantic-ai]'
    python examples/agents/pydantic_ai_agent.py [PROJECT] [--mcp]

PROJECT defaults to a throwaway project holding one skill. The model is PydanticAI's
``FunctionModel`` scripted to read the skill lemon put in its instructions and answer, so
nothing leaves the machine; swap in a real model (``Agent("openai:gpt-5", ...)``) to use it.
``--mcp`` also starts the MCP servers configured for the project (off by default here).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from _demo import REQUEST, demo_args
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lemon_skills.integrations.pydantic_ai import capability


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Read the first skill the instructions name, then answer with what it said."""
    if len(messages) == 1:
        print(f"instructions: {len(info.instructions or '')} characters")
        print("tools sent:", ", ".join(t.name for t in info.function_tools))
        return ModelResponse(parts=[ToolCallPart("read_skill", {"key": "release-notes"})])
    text = str(messages[-1].parts[0].content)  # type: ignore[union-attr]
    return ModelResponse(parts=[TextPart("Following the skill:\n" + text.splitlines()[-1])])


async def main(project: Path, mcp: bool) -> None:
    agent = Agent(FunctionModel(scripted), capabilities=[capability(cwd=project, mcp=mcp)])
    async with agent:  # MCP servers start once here and stop with the agent
        result = await agent.run(REQUEST)
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main(*demo_args(sys.argv[1:])))
