"""The Anthropic SDK's tool runner with lemon's skills, MCP tools and approvals, offline.

    pip install 'lemon-skills[anthropic]'
    python examples/agents/anthropic_agent.py

Scripted Messages API replies on an ``httpx`` mock transport stand in for the API (drop the
``http_client`` argument to talk to the real one). It runs on the demo project (one skill) with
lemon's bundled fixture MCP server in a throwaway agent dir, configured with ``approve:
destructive``, so its unannotated ``echo`` tool is held until the loop body approves it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
from _demo import REQUEST
from anthropic import AsyncAnthropic
from offline_world import world

from lemon_skills.integrations import anthropic as lemon

REPLIES: list[list[dict[str, Any]]] = [
    [{"type": "tool_use", "id": "tu_1", "name": "read_skill", "input": {"key": "release-notes"}}],
    [{"type": "tool_use", "id": "tu_2", "name": "mcp_fx_echo", "input": {"message": "drafted"}}],
    [{"type": "text", "text": "Release notes drafted and announced."}],
]


class ScriptedApi:
    """The Messages API, one scripted reply per request."""

    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.sent += 1
        tools = [t["name"] for t in json.loads(request.content).get("tools", ())]
        print(f"request {self.sent}: tools {tools or '(kept by the thread)'}")
        content = REPLIES[self.sent - 1]
        stop = "tool_use" if content[0]["type"] == "tool_use" else "end_turn"
        message = {
            "id": f"msg_{self.sent}", "type": "message", "role": "assistant",
            "model": "claude-example", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        return httpx2.Response(200, json=message)


async def main() -> None:
    transport = httpx2.MockTransport(ScriptedApi())
    client = AsyncAnthropic(api_key="offline", http_client=httpx2.AsyncClient(transport=transport))
    async with lemon.toolkit(cwd=world()) as kit:
        turn = await kit.turn(REQUEST)
        runner = client.beta.messages.tool_runner(
            model="claude-example",
            max_tokens=1024,
            system=[{"type": "text", "text": "You are a release manager."}, *turn.system],
            tools=turn.tools,
            messages=[{"role": "user", "content": REQUEST}],
        )
        async for message in runner:
            # The runner runs this reply's tool calls when the loop body is done with it.
            for call in turn.held(message):
                print(f"approval asked for {call.name}({call.input})")
                turn.approve(call)  # or turn.reject(call, "why"): it never runs
            for block in message.content:
                if block.type == "text":
                    print("agent:", block.text)


if __name__ == "__main__":
    asyncio.run(main())
