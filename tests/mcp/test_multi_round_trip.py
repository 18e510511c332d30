"""SEP-2322 multi round-trip tool calls on a 2026-07-28 server, through ``McpSource``: input
requests answered by the host's elicitation and sampling callbacks, ``requestState`` echoed
byte for byte, a fresh JSON-RPC id per round, nothing carried over to other calls, and a
result without ``resultType`` read as complete."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest

from tests.mcp.servers.modern import STATE, ModernServer


async def _confirm(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def _model(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="4"), model="host-model"
    )


@pytest.fixture
def modern(serve, make_source):
    server = ModernServer()
    url = serve(server.app()).url("/mcp")
    source = make_source(
        [{"name": "modern", "url": url}],
        elicitation_factory=lambda cfg: _confirm,
        sampling_factory=lambda cfg: _model,
    )
    return server, source


def test_input_requests_are_answered_by_the_host_and_the_state_echoed(modern):
    server, source = modern
    result = source.call_tool("mcp_modern_echo_state", {})
    assert json.loads(result.text) == {
        "answers": {"confirm": {"action": "accept", "content": {"ok": True}}}
    }
    first, retry = server.calls("echo_state")
    assert retry.params["requestState"] == STATE  # byte for byte
    assert "requestState" not in first.params
    assert retry.id != first.id


def test_a_round_without_state_sends_none_back(modern):
    server, source = modern
    source.call_tool("mcp_modern_no_state", {})
    first, retry = server.calls("no_state")
    assert "inputResponses" in retry.params
    assert "requestState" not in retry.params
    assert retry.id != first.id


def test_sampling_input_requests_go_to_the_sampling_callback(modern):
    server, source = modern
    result = source.call_tool("mcp_modern_ask_model", {})
    answer = json.loads(result.text)["answers"]["model"]
    assert answer["content"] == {"type": "text", "text": "4"}
    assert answer["model"] == "host-model"


def test_other_calls_carry_nothing_of_a_round_trip(modern):
    server, source = modern
    source.call_tool("mcp_modern_echo_state", {})
    source.call_tool("mcp_modern_plain", {})
    [plain] = server.calls("plain")
    assert "inputResponses" not in plain.params
    assert "requestState" not in plain.params


def test_a_result_without_result_type_is_the_complete_result(modern):
    server, source = modern
    result = source.call_tool("mcp_modern_no_result_type", {})
    assert not result.is_error
    assert result.text == "no_result_type"
    assert len(server.calls("no_result_type")) == 1
