from __future__ import annotations

import hashlib
import json
import logging
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ConfigError
from lemon_skills.mcp.sampling import handler as sampling
from lemon_skills.mcp.sampling.handler import SamplingPolicy, SamplingSummary
from lemon_skills.selftest.fixtures.sampling_server import server as sampling_server
from tests.helpers import approval_operator as operator

ROOT = Path(__file__).resolve().parents[3]


def params(text: str = "ping", **extra: Any) -> types.CreateMessageRequestParams:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.CreateMessageRequestParams(messages=[message], max_tokens=16, **extra)


def answer(text: str = "pong") -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=text), model="host-model"
    )


async def ask(callback: Any, text: str = "ping", **arguments: Any) -> types.CallToolResult:
    async with Client(sampling_server, sampling_callback=callback, mode="legacy") as client:
        return await client.call_tool("ask", {"text": text, **arguments})


def run_ask(callback: Any, text: str = "ping", **arguments: Any) -> types.CallToolResult:
    return anyio.run(lambda: ask(callback, text, **arguments))


def test_summary_counts_shape_and_hashes_canonical_json():
    request = types.CreateMessageRequestParams(
        messages=[
            types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text="héllo")
            ),
            types.SamplingMessage(
                role="assistant",
                content=[
                    types.TextContent(type="text", text="abc"),
                    types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
                ],
            ),
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text="x")),
        ],
        max_tokens=64,
        model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="claude")]),
    )
    summary = sampling.summarize(request)
    wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    canonical = json.dumps(wire, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert summary == SamplingSummary(
        request_hash=hashlib.sha256(canonical.encode()).hexdigest()[:16],
        message_count=3,
        roles=("user", "assistant"),
        content_kinds={"image": 1, "text": 3},
        text_char_count=9,
        max_tokens=64,
        requested_model="claude",
    )
    assert "héllo" not in json.dumps(summary.to_dict())


def test_without_a_policy_no_callback_and_no_capability():
    assert sampling.sampling_callback("demo", None) is None

    async def main() -> str:
        async with Client(sampling_server, mode="legacy") as client:
            result = await client.call_tool("client_can_sample", {})
        [block] = result.content
        assert isinstance(block, types.TextContent)
        return block.text

    assert anyio.run(main) == "no"


def test_a_deny_policy_still_advertises_and_refuses():
    callback = sampling.sampling_callback("demo", {"mode": "deny"})

    async def capability() -> str:
        async with Client(sampling_server, sampling_callback=callback, mode="legacy") as client:
            result = await client.call_tool("client_can_sample", {})
        [block] = result.content
        assert isinstance(block, types.TextContent)
        return block.text

    assert anyio.run(capability) == "yes"
    with pytest.raises(Exception) as refused:
        run_ask(callback)
    [error] = leaves(refused.value)
    assert isinstance(error, MCPError)
    assert error.error.message == "Sampling request rejected"


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaves(sub)]
    return [exc]


def test_model_mode_hands_the_raw_request_to_the_delegate():
    seen: list[tuple[types.CreateMessageRequestParams, SamplingSummary]] = []

    def delegate(request: types.CreateMessageRequestParams, summary: SamplingSummary):
        seen.append((request, summary))
        return {"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"}

    callback = sampling.sampling_callback("demo", {"mode": "model"}, delegate=delegate)
    result = run_ask(callback, "what is 2+2?")
    assert not result.is_error
    assert result.content[0].text == "answer:pong"  # type: ignore[union-attr]
    [(request, summary)] = seen
    assert request.messages[0].content.text == "what is 2+2?"  # type: ignore[union-attr]
    assert summary.text_char_count == len("what is 2+2?")


@pytest.mark.parametrize(
    ("config", "arguments", "reason"),
    [
        ({"mode": "model", "max_tokens": 8}, {"max_tokens": 16}, "max_tokens_exceeded"),
        ({"mode": "model", "allowed_models": ["a"]}, {"model": "b"}, "model_not_allowed"),
        ({"mode": "model"}, {}, "delegate_required"),
        ({"mode": "reviewed_model"}, {}, "reviewer_required"),
        ({"mode": "deny"}, {}, "sampling_disabled"),
    ],
)
def test_limits_and_missing_parts_are_refused_with_a_reason(config, arguments, reason):
    callback = sampling.sampling_callback("demo", config)
    refusal = anyio.run(lambda: callback(None, params_for(arguments)))  # type: ignore[misc]
    assert isinstance(refusal, types.ErrorData)
    assert refusal.code == sampling.REJECTED_CODE
    assert refusal.data["reason"] == reason
    assert refusal.data["request"]["message_count"] == 1


def params_for(arguments: dict[str, Any]) -> types.CreateMessageRequestParams:
    request = params()
    if "max_tokens" in arguments:
        request = request.model_copy(update={"max_tokens": arguments["max_tokens"]})
    if "model" in arguments:
        prefs = types.ModelPreferences(hints=[types.ModelHint(name=arguments["model"])])
        request = request.model_copy(update={"model_preferences": prefs})
    return request


def test_the_size_limit_is_checked_before_the_model_allowlist():
    policy = SamplingPolicy(mode="model", max_tokens=8, allowed_models=("a",), delegate=None)
    request = params_for({"max_tokens": 16, "model": "b"})
    refusal = anyio.run(lambda: sampling.handle(request, policy, server="demo"))
    assert isinstance(refusal, types.ErrorData)
    assert refusal.data["reason"] == "max_tokens_exceeded"


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [
        (False, "review_rejected"),
        ("reject", "review_rejected"),
        (("reject", "too long"), {"kind": "review_rejected", "detail_hash": "HASH"}),
        ("maybe", "invalid_review_result"),
        (RuntimeError("reviewer down"), "review_failed"),
    ],
)
def test_reviewer_verdicts(verdict, reason):
    def reviewer(summary: SamplingSummary):
        if isinstance(verdict, Exception):
            raise verdict
        return verdict

    policy = SamplingPolicy(
        mode="reviewed_model", reviewer=reviewer, delegate=lambda p, s: answer()
    )
    refusal = anyio.run(lambda: sampling.handle(params(), policy, server="demo"))
    assert isinstance(refusal, types.ErrorData)
    if isinstance(reason, dict):
        reason = {**reason, "detail_hash": sampling.short_hash("too long")}
    assert refusal.data["reason"] == reason


def test_reviewer_and_delegate_see_the_same_redacted_summary():
    reviewed: list[SamplingSummary] = []
    delegated: list[SamplingSummary] = []

    async def reviewer(summary: SamplingSummary) -> bool:
        reviewed.append(summary)
        return True

    def delegate(request: types.CreateMessageRequestParams, summary: SamplingSummary):
        delegated.append(summary)
        return answer()

    policy = SamplingPolicy(
        mode="reviewed_model", reviewer=reviewer, delegate=delegate, max_tokens=32
    )
    result = run_ask(sampling.sampling_callback("demo", policy), "ping")
    assert not result.is_error
    assert reviewed == delegated
    assert reviewed[0].server == "demo"
    assert reviewed[0].message_count == 1
    assert reviewed[0].max_tokens == 16
    assert reviewed[0].text_char_count == 4
    assert "ping" not in json.dumps(reviewed[0].to_dict())


@pytest.mark.parametrize(
    ("result", "reason"),
    [(RuntimeError("model down"), "delegate_failed"), ({"nope": 1}, "invalid_delegate_result")],
)
def test_delegate_failures(result, reason):
    def delegate(request, summary):
        if isinstance(result, Exception):
            raise result
        return result

    policy = SamplingPolicy(mode="model", delegate=delegate)
    refusal = anyio.run(lambda: sampling.handle(params(), policy, server="demo"))
    assert isinstance(refusal, types.ErrorData)
    assert refusal.data["reason"] == reason


def test_config_parsing_and_validation():
    policy = sampling.parse_policy(
        {
            "mode": "reviewed_model",
            "require_approval": True,
            "maxTokens": 64,
            "allowed_models": ["lemon"],
            "approval_timeout_ms": 2000,
            "approval_context": {"run_id": "r1", "agent_id": "a"},
        }
    )
    assert policy.reviewer == "ops_approval"
    assert policy.max_tokens == 64
    assert policy.allowed_models == ("lemon",)
    assert policy.approval_timeout == 2.0
    assert policy.approval_context == ApprovalContext(run_id="r1", agent_id="a")
    assert sampling.parse_policy({}).mode == "deny"
    assert sampling.parse_policy({"reviewer": "approval"}).reviewer == "ops_approval"
    assert sampling.validate_policy(
        {
            "mode": "auto",
            "reviewer": "someone",
            "max_tokens": 0,
            "allowed_models": "x",
            "approval_timeout_ms": -1,
        }
    ) == [
        "sampling.mode must be model, reviewed_model, or deny",
        "sampling.reviewer must be a function or ops_approval",
        "sampling.max_tokens must be a positive integer",
        "sampling.allowed_models must be a list of strings",
        "sampling.approval_timeout_ms must be a positive integer",
    ]
    with pytest.raises(ConfigError, match="sampling.mode"):
        sampling.sampling_callback("demo", {"mode": "yes"})


def test_ops_approval_over_stdio_is_decided_by_another_process_and_never_sees_the_text(
    agent_dir, caplog
):
    caplog.set_level(logging.DEBUG)
    marker = f"top-secret-prompt-{uuid.uuid4().hex}"
    delegated: list[str] = []

    def delegate(request: types.CreateMessageRequestParams, summary: SamplingSummary):
        delegated.append(request.messages[0].content.text)  # type: ignore[union-attr]
        assert marker not in json.dumps(summary.to_dict())
        return answer("pong")

    callback = sampling.sampling_callback(
        "Sampling Fixture",
        {
            "mode": "reviewed_model",
            "reviewer": "ops_approval",
            "max_tokens": 32,
            "approval_timeout_ms": 30000,
            "approval_context": {"run_id": "run-42", "session_key": "s", "agent_id": "ag"},
        },
        delegate=delegate,
    )
    decider = operator.spawn("approve", "--tool", "mcp_sampling_fixture_sampling")
    stdio = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lemon_skills.selftest.fixtures.sampling_server"],
        cwd=str(ROOT),
    )

    async def main() -> types.CallToolResult:
        async with Client(stdio, sampling_callback=callback, mode="legacy") as client:
            return await client.call_tool("ask", {"text": marker})

    result = anyio.run(main)
    seen = operator.finish(decider)
    assert not result.is_error
    assert result.content[0].text == "answer:pong"  # type: ignore[union-attr]
    assert delegated == [marker]
    assert seen["tool"] == "mcp_sampling_fixture_sampling"
    assert seen["run_id"] == "run-42"
    assert seen["agent_id"] == "ag"
    action = seen["action"]
    assert isinstance(action, dict)
    assert action["type"] == "mcp_sampling"
    assert action["server"] == "sampling_fixture"
    assert action["message_count"] == 1
    assert action["max_tokens"] == 16
    assert action["text_char_count"] == len(marker)
    assert isinstance(action["request_hash"], str) and len(action["request_hash"]) == 16
    [stored] = ApprovalStore().list(status=None)
    assert stored.status == "approved"
    assert marker not in json.dumps(stored.to_dict())
    for path in agent_dir.glob("approvals.db*"):
        assert marker.encode() not in path.read_bytes()
    assert marker not in caplog.text
    assert all(marker not in str(r.args) for r in caplog.records)


def test_an_operator_denial_is_a_rejection_with_a_detail_hash(agent_dir):
    decider = operator.spawn("deny")
    policy = SamplingPolicy(
        mode="reviewed_model", reviewer="ops_approval", delegate=lambda p, s: answer()
    )
    refusal = anyio.run(lambda: sampling.handle(params(), policy, server="demo"))
    seen = operator.finish(decider)
    assert seen["tool"] == "mcp_demo_sampling"
    assert seen["run_id"] == "mcp-sampling"
    assert seen["session_key"] == "agent:mcp:main"
    assert seen["rationale"].startswith("MCP sampling request; server=demo; messages=1; roles=user")
    assert isinstance(refusal, types.ErrorData)
    assert refusal.data["reason"] == {
        "kind": "review_rejected",
        "detail_hash": sampling.short_hash("approval_denied"),
    }


def test_an_expired_approval_is_a_failed_review(agent_dir):
    policy = SamplingPolicy(
        mode="reviewed_model",
        reviewer="ops_approval",
        delegate=lambda p, s: answer(),
        approval_timeout=0.2,
    )
    refusal = anyio.run(lambda: sampling.handle(params(), policy, server="demo"))
    assert isinstance(refusal, types.ErrorData)
    assert refusal.data["reason"] == "review_failed"
    assert [a.status for a in ApprovalStore().list(status=None)] == ["expired"]
