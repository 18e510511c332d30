"""The three sampling checks of the stdio proof, through ``McpSource`` and the sampling fixture.

The fixture's ``ask`` tool sends ``sampling/createMessage`` (one user message "ping",
``maxTokens`` 16); ``client_can_sample`` says whether the capability was advertised. The
checks run a ``model`` policy with the source's delegate, a ``reviewed_model`` policy with a
function reviewer, and one with the ``ops_approval`` reviewer resolved through the approvals
store while the call waits.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import mcp.types as types

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.mcp.sampling.handler import SamplingSummary
from lemon_skills.mcp.source import McpSource
from lemon_skills.selftest.proof import Proof, expect, wait_for_approval

PROMPT = "ping"
SERVER = "sampler"
_WAIT_S = 20.0


class _Model:
    """The host's model for the checks: answers "pong" and keeps what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[types.CreateMessageRequestParams, SamplingSummary]] = []

    def __call__(
        self, params: types.CreateMessageRequestParams, summary: SamplingSummary
    ) -> types.CreateMessageResult:
        self.calls.append((params, summary))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="pong"), model="smoke"
        )


def sampling_checks(proof: Proof) -> None:
    """Append the three sampling checks to ``proof``."""
    proof.check("mcp_stdio_sampling_callback_wrapper", _callback_wrapper)
    proof.check("mcp_stdio_sampling_reviewed_model_policy", _reviewed_model)
    proof.check("mcp_stdio_sampling_ops_approval_bridge", _ops_approval)


def _entry(sampling: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": SERVER,
        "command": sys.executable,
        "args": ["-m", "lemon_skills.selftest.fixtures.sampling_server"],
        "sampling": sampling,
    }


def _ask(source: McpSource) -> str:
    return source.call_tool(f"mcp_{SERVER}_ask", {"text": PROMPT}).text


def _callback_wrapper() -> None:
    model = _Model()
    with McpSource([_entry({"mode": "model"})], include_config=False, sampling_delegate=model) as s:
        advertised = s.call_tool(f"mcp_{SERVER}_client_can_sample").text
        answer = _ask(s)
    expect(advertised == "yes", "the sampling capability was not advertised")
    expect(answer == "answer:pong", "the delegate's answer did not reach the server")
    [(params, _)] = model.calls
    expect(params.max_tokens == 16, "maxTokens did not reach the delegate")
    expect(
        [(m.role, getattr(m.content, "text", None)) for m in params.messages] == [("user", PROMPT)],
        "the delegate did not receive the original messages",
    )


def _reviewed_model() -> None:
    model = _Model()
    reviewed: list[SamplingSummary] = []

    def reviewer(summary: SamplingSummary) -> str:
        reviewed.append(summary)
        return "approve"

    policy = {"mode": "reviewed_model", "reviewer": reviewer, "max_tokens": 32}
    with McpSource([_entry(policy)], include_config=False, sampling_delegate=model) as s:
        expect(_ask(s) == "answer:pong", "the reviewed request was not answered")
    [summary] = reviewed
    expect(summary.message_count == 1 and summary.max_tokens == 16, "wrong counts")
    expect(summary.text_char_count == len(PROMPT), "wrong character count")
    expect(isinstance(summary.request_hash, str) and len(summary.request_hash) == 16, "no hash")
    expect(PROMPT not in json.dumps(summary.to_dict()), "the summary holds the prompt text")
    expect([s for _, s in model.calls] == [summary], "reviewer and delegate saw other summaries")


def _ops_approval() -> None:
    model = _Model()
    run_id = f"smoke-sampling-{time.time_ns()}"
    policy = {
        "mode": "reviewed_model",
        "reviewer": "ops_approval",
        "max_tokens": 32,
        "approval_timeout_ms": round(_WAIT_S * 1000),
        "approval_context": {
            "run_id": run_id,
            "session_key": "smoke:sampling",
            "agent_id": "smoke",
        },
    }
    store = ApprovalStore()
    answers: list[str] = []
    with McpSource([_entry(policy)], include_config=False, sampling_delegate=model) as s:
        caller = threading.Thread(target=lambda: answers.append(_ask(s)), daemon=True)
        caller.start()
        pending = wait_for_approval(store, lambda a: a.context.run_id == run_id, timeout=_WAIT_S)
        action = dict(pending.action)
        store.approve(pending.id, by="smoke")
        caller.join(_WAIT_S)
    expect(pending.tool == f"mcp_{SERVER}_sampling", "unexpected approval tool")
    expect(action.get("type") == "mcp_sampling" and action.get("server") == SERVER, "bad action")
    expect((action.get("message_count"), action.get("max_tokens")) == (1, 16), "wrong counts")
    expect(isinstance(action.get("request_hash"), str), "no request hash")
    expect(PROMPT not in json.dumps(pending.to_dict()), "the approval holds the prompt text")
    expect(answers == ["answer:pong"], "the approved request was not answered")
    [(_, summary)] = model.calls
    expect(PROMPT not in json.dumps(summary.to_dict()), "the delegate's summary holds the text")
