"""Sampling through McpSource: policies from the server's config, the source's delegate, and
operator reviews through the approvals store."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import McpToolError
from lemon_skills.mcp.sampling.handler import SamplingSummary
from lemon_skills.mcp.source import McpSource
from lemon_skills.selftest.fixtures import sampling_server
from lemon_skills.selftest.fixtures.protected import Recorder
from lemon_skills.selftest.fixtures.serve import Served
from tests.helpers import approval_operator as operator

pytestmark = pytest.mark.usefixtures("in_memory", "trusted_projects")


def stdio_entry(sampling: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": "sampler",
        "command": sys.executable,
        "args": ["-m", "lemon_skills.selftest.fixtures.sampling_server"],
    }
    return entry | ({"sampling": sampling} if sampling is not None else {})


class Recording:
    """A host model: answers "pong" and keeps what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[types.CreateMessageRequestParams, SamplingSummary]] = []

    def __call__(
        self, params: types.CreateMessageRequestParams, summary: SamplingSummary
    ) -> types.CreateMessageResult:
        self.seen.append((params, summary))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="pong"), model="host"
        )

    def texts(self) -> list[str]:
        return [p.messages[0].content.text for p, _ in self.seen]  # type: ignore[union-attr]


@pytest.fixture
def http_sampler(serve: Callable[[Any], Served]) -> Callable[..., dict[str, Any]]:
    served = serve(sampling_server.http_app())

    def entry(sampling: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": "sampler", "url": served.url("/mcp")}
        return out | ({"sampling": sampling} if sampling is not None else {})

    return entry


def test_sampling_is_advertised_only_when_configured_and_deny_refuses(make_source):
    plain = make_source([stdio_entry()])
    assert plain.call_tool("mcp_sampler_client_can_sample").text == "no"
    with pytest.raises(McpToolError, match="did not declare the sampling capability"):
        plain.call_tool("mcp_sampler_ask", {"text": "ping"})
    denying = make_source([stdio_entry({"mode": "deny"})], sampling_delegate=Recording())
    assert denying.call_tool("mcp_sampler_client_can_sample").text == "yes"
    with pytest.raises(McpToolError, match="Sampling request rejected"):
        denying.call_tool("mcp_sampler_ask", {"text": "ping"})


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_model_mode_answers_through_the_source_delegate(transport, make_source, http_sampler):
    model = Recording()
    make = stdio_entry if transport == "stdio" else http_sampler
    source = make_source([make({"mode": "model", "max_tokens": 32})], sampling_delegate=model)
    assert source.call_tool("mcp_sampler_ask", {"text": "what is 2+2?"}).text == "answer:pong"
    assert model.texts() == ["what is 2+2?"]
    [(params, summary)] = model.seen
    assert params.max_tokens == 16
    assert summary.text_char_count == len("what is 2+2?")
    with pytest.raises(McpToolError, match="Sampling request rejected"):
        source.call_tool("mcp_sampler_ask", {"text": "long", "max_tokens": 64})
    assert len(model.seen) == 1  # over the limit: the model was never asked


def test_a_model_policy_without_any_delegate_is_refused(make_source):
    source = make_source([stdio_entry({"mode": "model"})])
    with pytest.raises(McpToolError, match="Sampling request rejected"):
        source.call_tool("mcp_sampler_ask", {"text": "ping"})


def test_reviewed_model_from_mcp_json_waits_for_an_operator_and_never_shows_the_text(
    project: Path, agent_dir: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    marker = f"private-prompt-{uuid.uuid4().hex}"
    policy = {
        "mode": "reviewed_model",
        "reviewer": "ops_approval",
        "max_tokens": 32,
        "approval_timeout_ms": 30000,
        "approval_context": {"run_id": "run-7", "session_key": "agent:x", "agent_id": "ag"},
    }
    (project / ".lemon").mkdir()
    doc = {"servers": [stdio_entry(policy)]}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    model = Recording()
    decider = operator.spawn("approve", "--tool", "mcp_sampler_sampling")
    with McpSource(cwd=project, sampling_delegate=model) as source:
        assert source.call_tool("mcp_sampler_ask", {"text": marker}).text == "answer:pong"
        status = json.dumps(source.status())
    seen = operator.finish(decider)
    assert model.texts() == [marker]
    assert seen["run_id"] == "run-7" and seen["agent_id"] == "ag"
    action = seen["action"]
    assert isinstance(action, dict)
    assert action["type"] == "mcp_sampling"
    assert action["server"] == "sampler"
    assert (action["message_count"], action["max_tokens"]) == (1, 16)
    assert action["text_char_count"] == len(marker)
    assert action["request_hash"] == model.seen[0][1].request_hash
    [stored] = ApprovalStore().list(status=None)
    assert stored.status == "approved"
    assert marker not in json.dumps(stored.to_dict()) + stored.rationale
    for path in agent_dir.glob("approvals.db*"):
        assert marker.encode() not in path.read_bytes()
    assert marker not in caplog.text + status


def test_an_operator_denial_never_reaches_the_model(make_source, agent_dir):
    model = Recording()
    policy = {"mode": "reviewed_model", "reviewer": "ops_approval"}
    source = make_source([stdio_entry(policy)], sampling_delegate=model)
    decider = operator.spawn("deny", "--tool", "mcp_sampler_sampling")
    with pytest.raises(McpToolError, match="Sampling request rejected"):
        source.call_tool("mcp_sampler_ask", {"text": "ping"})
    operator.finish(decider)
    assert model.seen == []
    assert [a.status for a in ApprovalStore().list(status=None)] == ["denied"]


def test_debug_logs_hold_no_prompt_text_and_the_sdk_logs_no_session_id(make_source, serve, caplog):
    caplog.set_level(logging.DEBUG)
    recorder = Recorder(sampling_server.http_app())
    served = serve(recorder)
    entry = {"name": "sampler", "url": served.url("/mcp"), "protocol": "legacy"}
    marker = f"private-prompt-{uuid.uuid4().hex}"
    source = make_source([entry | {"sampling": {"mode": "model"}}], sampling_delegate=Recording())
    assert source.call_tool("mcp_sampler_ask", {"text": marker}).text == "answer:pong"
    session_ids = {r.response_headers.get("mcp-session-id") for r in recorder.requests} - {None}
    assert session_ids
    ours = [r for r in caplog.records if not r.name.startswith(("sse_starlette", "mcp.server"))]
    logged = "\n".join(r.getMessage() for r in ours)
    assert "SSE message: sampling/createMessage" in logged  # the line is kept, its payload not
    assert marker not in logged
    transport = "\n".join(r.getMessage() for r in ours if r.name.startswith("mcp.client"))
    assert "Received session ID (not logged)" in transport
    for session_id in session_ids:
        assert session_id not in transport
