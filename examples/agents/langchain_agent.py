"""A LangChain agent with lemon's skills, MCP tools and approvals, offline.

    pip install 'lemon-skills[langchain]'
    python examples/agents/langchain_agent.py

A scripted chat model stands in for a real one (swap in ``ChatAnthropic(...)`` or any chat
model). It runs on the demo project (one skill) with lemon's bundled fixture MCP server in a
throwaway agent dir, configured with ``approve: destructive``, so its unannotated ``echo`` tool
pauses the run for a person, here approved by the script.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _demo import REQUEST
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from offline_world import world

from lemon_skills.integrations.langchain import middleware


class ScriptedModel(BaseChatModel):
    """Answers each call with the next scripted message and prints what it was offered."""

    replies: list[AIMessage]
    step: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        system = next((m.text for m in messages if isinstance(m, SystemMessage)), "")
        names = [t["function"]["name"] for t in kwargs.get("tools", [])]
        print(f"model call {self.step + 1}: {len(system)} chars of instructions, tools {names}")
        reply = self.replies[self.step]
        self.step += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])


def call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


async def main() -> None:
    lemon = middleware(cwd=world())
    model = ScriptedModel(
        replies=[
            call("read_skill", {"key": "release-notes"}, 1),
            call("mcp_fx_echo", {"message": "v2.1 notes drafted"}, 2),
            AIMessage("Release notes drafted and announced."),
        ]
    )
    agent = create_agent(model, middleware=[lemon], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "example"}}
    ask = {"messages": [{"role": "user", "content": REQUEST}]}
    out = await agent.ainvoke(ask, config, version="v2")
    while out.interrupts:  # lemon's policy held a call: answer as HumanInTheLoopMiddleware expects
        answers = {}
        for pending in out.interrupts:
            print(f"approval asked for {pending.value['name']}({pending.value['args']})")
            answers[pending.id] = {"type": "approve"}
        out = await agent.ainvoke(Command(resume=answers), config, version="v2")
    print("agent:", out.value["messages"][-1].text)
    await lemon.aclose()


if __name__ == "__main__":
    asyncio.run(main())
