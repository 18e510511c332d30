"""The Anthropic adapter through the SDK's own tool runner (``client.beta.messages.tool_runner``)
against scripted Messages API replies on an ``httpx`` mock transport: what each request sends,
what lemon's tools answer, tool search across turns, and approvals decided in the loop body."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "anthropic.lib.tools", reason="the Anthropic SDK is not installed (extra: anthropic)"
)

import httpx2
from anthropic import AsyncAnthropic

from lemon_skills.integrations.anthropic import Toolkit, toolkit
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

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class ScriptedApi:
    """The Messages API as a list of replies; every request body is kept."""

    def __init__(self, *replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        content = self.replies[len(self.requests) - 1]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        message = {
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
            "model": "claude-test", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        return httpx2.Response(200, json=message)

    def client(self) -> AsyncAnthropic:
        transport = httpx2.MockTransport(self)
        return AsyncAnthropic(api_key="test", http_client=httpx2.AsyncClient(transport=transport))

    def tool_results(self, n: int) -> list[dict[str, Any]]:
        """The tool results request ``n`` carried."""
        return [
            b
            for m in self.requests[n]["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]


def use(name: str, args: dict[str, Any], n: int = 1) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"tu_{n}", "name": name, "input": args}]


def text(said: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": said}]


@pytest.fixture
def world(big_server, invoice_skill) -> Path:
    """The 362-tool server and the skill; the marker file its destructive tool writes."""
    return big_server


@pytest.fixture
async def kit(project) -> AsyncIterator[Toolkit]:
    async with toolkit(cwd=project) as made:
        yield made


async def run(api: ScriptedApi, kit: Toolkit, request: str) -> list[Any]:
    turn = await kit.turn(request)
    runner = api.client().beta.messages.tool_runner(
        model="claude-test", max_tokens=512, system=turn.system, tools=turn.tools,
        messages=[{"role": "user", "content": request}],
    )  # fmt: skip
    return [m async for m in runner]


async def test_system_names_the_skill_and_read_skill_returns_it(world, kit):
    api = ScriptedApi(use("read_skill", {"key": SKILL}), text("done"))
    await run(api, kit, REQUEST)
    first = api.requests[0]
    assert SKILL in json.dumps(first["system"])
    assert "read_skill" in {t["name"] for t in first["tools"]}
    (result,) = api.tool_results(1)
    assert SKILL_TEXT in json.dumps(result["content"]) and not result.get("is_error")


async def test_big_server_deferred_and_the_found_tool_runs_next_turn(world, kit):
    api = ScriptedApi(
        use("tool_search", {"query": SEARCH}), use(FOUND, FOUND_ARGS, 2), text("sent")
    )
    await run(api, kit, UNRELATED)
    tools = {t["name"]: t for t in api.requests[0]["tools"]}
    up_front = [n for n, t in tools.items() if not t.get("defer_loading")]
    assert len(up_front) <= 30 and "tool_search" in up_front
    assert tools[FOUND]["defer_loading"] is True
    (found,) = api.tool_results(1)
    assert {"type": "tool_reference", "tool_name": FOUND} in found["content"]
    (ran,) = api.tool_results(2)
    assert ran["content"] == FOUND_TEXT and not ran.get("is_error")


async def decide_in_loop(api: ScriptedApi, kit: Toolkit, approve: bool) -> list[str]:
    turn = await kit.turn("drop the users table")
    runner = api.client().beta.messages.tool_runner(
        model="claude-test", max_tokens=512, system=turn.system, tools=turn.tools,
        messages=[{"role": "user", "content": "drop the users table"}],
    )  # fmt: skip
    held_names: list[str] = []
    async for message in runner:
        for call in turn.held(message):
            held_names.append(call.name)
            turn.approve(call) if approve else turn.reject(call, "keep the users")
    return held_names


async def test_destructive_call_is_held_and_never_runs_when_rejected(world, kit):
    api = ScriptedApi(use(DESTRUCTIVE, {"table": "users"}), text("ok, kept"))
    assert await decide_in_loop(api, kit, approve=False) == [DESTRUCTIVE]
    assert drops(world) == []
    (told,) = api.tool_results(1)
    assert told["is_error"] is True and "keep the users" in json.dumps(told["content"])


async def test_destructive_call_runs_once_when_approved(world, kit):
    api = ScriptedApi(use(DESTRUCTIVE, {"table": "users"}), text("dropped"))
    assert await decide_in_loop(api, kit, approve=True) == [DESTRUCTIVE]
    assert drops(world) == ["erased users"]
    (ran,) = api.tool_results(1)
    assert ran["content"] == "erased users"


async def test_undecided_call_is_not_run_and_the_model_is_told(world, kit):
    api = ScriptedApi(use(DESTRUCTIVE, {"table": "users"}), text("I need approval"))
    await run(api, kit, "drop the users table")
    assert drops(world) == []
    (told,) = api.tool_results(1)
    assert told["is_error"] is True and "needs approval" in json.dumps(told["content"])


async def test_approve_callback_decides_inside_the_run(world, project):
    asked: list[str] = []

    async def approve(call: Any) -> bool:
        asked.append(call.name)
        return True

    api = ScriptedApi(use(DESTRUCTIVE, {"table": "orders"}), text("dropped"))
    async with toolkit(cwd=project, approve=approve) as kit:
        await run(api, kit, "drop the orders table")
    assert asked == [DESTRUCTIVE] and drops(world) == ["erased orders"]


async def test_an_edited_call_runs_with_the_apps_arguments(world, kit):
    api = ScriptedApi(use(DESTRUCTIVE, {"table": "users"}), text("done"))
    turn = await kit.turn("drop the users table")
    runner = api.client().beta.messages.tool_runner(
        model="claude-test", max_tokens=512, system=turn.system, tools=turn.tools,
        messages=[{"role": "user", "content": "drop the users table"}],
    )  # fmt: skip
    async for message in runner:
        for held in turn.held(message):
            turn.approve(held, arguments={"table": "logs"})
    assert drops(world) == ["erased logs"]
    (ran,) = api.tool_results(1)
    assert "A person changed this call" in ran["content"] and "erased logs" in ran["content"]


async def test_images_come_back_as_image_blocks_and_failures_as_tool_errors(world, kit):
    api = ScriptedApi(
        use("mcp_big_render_chart", {}), use(FOUND, {"customer": "ACME"}, 2), text("ok")
    )
    await run(api, kit, "chart the invoices")
    (chart,) = api.tool_results(1)
    assert [b["type"] for b in chart["content"]] == ["text", "image"]
    assert chart["content"][1]["source"]["media_type"] == "image/png"
    (bad,) = api.tool_results(2)
    assert bad["is_error"] is True and "amount" in json.dumps(bad["content"])
