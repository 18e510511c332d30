"""Sampling policy for ``sampling/createMessage`` requests from MCP servers.

Off unless configured: :func:`sampling_callback` returns None without a policy, so the SDK does
not advertise the capability. A policy denies, or forwards to a host-supplied model delegate,
optionally after a review. Reviewers, approvals and logs only ever see the redacted
:class:`SamplingSummary` (hash, counts, roles, content kinds, character count, max tokens,
requested model), never the text; the raw request reaches only the delegate.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import mcp.types as types
from mcp.client.session import ClientRequestContext, SamplingFnT
from pydantic import ValidationError

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ConfigError
from lemon_skills.mcp.sampling.policy import (
    DEFAULT_APPROVAL_TIMEOUT_S,
    DEFAULT_MAX_TOKENS,
    MODES,
    OPS_APPROVAL,
    SamplingMode,
    server_slug,
)
from lemon_skills.mcp.sampling.policy import validate_policy as _validate_config

logger = logging.getLogger(__name__)

#: A reviewer answers True / "approve" / "approved", or False / "reject" / ("reject", detail).
Review: TypeAlias = bool | str | tuple[str, str]
ReviewFn: TypeAlias = Callable[["SamplingSummary"], Review | Awaitable[Review]]
SamplingResult: TypeAlias = types.CreateMessageResult | types.CreateMessageResultWithTools
DelegateFn: TypeAlias = Callable[
    [types.CreateMessageRequestParams, "SamplingSummary"],
    SamplingResult | Mapping[str, Any] | Awaitable[SamplingResult | Mapping[str, Any]],
]

REJECTED_CODE = -1
_APPROVE = {"approve", "approved", "approve_once"}


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingSummary:
    """What a reviewer may know about a sampling request: shape, never content."""

    request_hash: str
    message_count: int
    roles: tuple[str, ...]
    content_kinds: Mapping[str, int]
    text_char_count: int
    max_tokens: int | None
    requested_model: str | None
    #: The configured name of the server asking, so one reviewer can serve several servers.
    server: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``request`` of rejections and the approval action fields;
        the asking server is named next to it there, not inside)."""
        return {
            "request_hash": self.request_hash,
            "message_count": self.message_count,
            "roles": list(self.roles),
            "content_kinds": dict(self.content_kinds),
            "text_char_count": self.text_char_count,
            "max_tokens": self.max_tokens,
            "requested_model": self.requested_model,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingPolicy:
    """How one server's sampling requests are handled."""

    mode: SamplingMode = "deny"
    max_tokens: int = DEFAULT_MAX_TOKENS
    allowed_models: tuple[str, ...] = ()
    reviewer: ReviewFn | Literal["ops_approval"] | None = None
    delegate: DelegateFn | None = None
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT_S
    approval_context: ApprovalContext = field(default_factory=ApprovalContext)


class SamplingRejected(Exception):
    """Internal: why a request was refused (a reason code, optionally with a detail hash)."""

    def __init__(self, reason: str, *, detail: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail

    def payload(self) -> str | dict[str, str]:
        if self.detail is None:
            return self.reason
        return {"kind": self.reason, "detail_hash": short_hash(self.detail)}


def short_hash(text: str) -> str:
    """The first 16 hex characters of sha256 (how request and detail hashes are written)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def canonical_json(params: types.CreateMessageRequestParams) -> str:
    """The wire form of the request as canonical JSON (sorted keys, no spaces)."""
    data = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def summarize(
    params: types.CreateMessageRequestParams, *, server: str | None = None
) -> SamplingSummary:
    """Reduce a request from ``server`` to its redacted summary (pure)."""
    roles: list[str] = []
    kinds: Counter[str] = Counter()
    chars = 0
    for message in params.messages:
        if message.role not in roles:
            roles.append(message.role)
        for block in message.content_as_list:
            kinds[block.type] += 1
            if isinstance(block, types.TextContent):
                chars += len(block.text)
    return SamplingSummary(
        request_hash=short_hash(canonical_json(params)),
        message_count=len(params.messages),
        roles=tuple(roles),
        content_kinds=dict(sorted(kinds.items())),
        text_char_count=chars,
        max_tokens=params.max_tokens,
        requested_model=_requested_model(params),
        server=server,
    )


def _requested_model(params: types.CreateMessageRequestParams) -> str | None:
    extra = params.model_extra or {}
    if isinstance(extra.get("model"), str):
        return str(extra["model"])
    hints = params.model_preferences.hints if params.model_preferences else None
    if hints and hints[0].name:
        return hints[0].name
    return None


def approval_rationale(server: str, summary: SamplingSummary) -> str:
    """The one-line rationale an operator sees for a sampling approval."""
    content = ",".join(f"{k}:{n}" for k, n in summary.content_kinds.items()) or "none"
    return (
        f"MCP sampling request; server={server}; messages={summary.message_count}; "
        f"roles={','.join(summary.roles)}; content={content}; "
        f"text_chars={summary.text_char_count}; max_tokens={summary.max_tokens or 'unknown'}; "
        f"model={summary.requested_model or 'unspecified'}; request={summary.request_hash}"
    )


def ops_approval_reviewer(
    server: str,
    *,
    store: ApprovalStore | None = None,
    context: ApprovalContext | None = None,
    timeout: float = DEFAULT_APPROVAL_TIMEOUT_S,
) -> Callable[[SamplingSummary], Awaitable[Review]]:
    """A reviewer that asks an operator through the approvals store (``mcp_<server>_sampling``)."""
    slug = server_slug(server)
    ctx = _default_context(context)
    approvals = store or ApprovalStore()

    async def review(summary: SamplingSummary) -> Review:
        decided = await approvals.arequest(
            f"mcp_{slug}_sampling",
            {"type": "mcp_sampling", "server": slug, **summary.to_dict()},
            rationale=approval_rationale(slug, summary),
            context=ctx,
            timeout=timeout,
        )
        if decided.approved:
            return "approve"
        if decided.status == "denied":
            return ("reject", "approval_denied")
        raise TimeoutError(f"sampling approval {decided.id} {decided.status}")

    return review


def _default_context(context: ApprovalContext | None) -> ApprovalContext:
    given = context or ApprovalContext()
    return ApprovalContext(
        run_id=given.run_id or "mcp-sampling",
        session_key=given.session_key or "agent:mcp:main",
        agent_id=given.agent_id,
    )


async def handle(
    params: types.CreateMessageRequestParams,
    policy: SamplingPolicy,
    *,
    server: str,
    store: ApprovalStore | None = None,
) -> SamplingResult | types.ErrorData:
    """Apply ``policy`` to one request: limits, review, then the delegate."""
    summary = summarize(params, server=server)
    try:
        result = await _decide(params, summary, policy, server=server, store=store)
    except SamplingRejected as rejected:
        logger.info(
            "MCP sampling request %s from %s rejected: %s",
            summary.request_hash,
            server,
            rejected.reason,
        )
        return types.ErrorData(
            code=REJECTED_CODE,
            message="Sampling request rejected",
            data={"reason": rejected.payload(), "request": summary.to_dict()},
        )
    logger.info("MCP sampling request %s from %s answered", summary.request_hash, server)
    return result


async def _decide(
    params: types.CreateMessageRequestParams,
    summary: SamplingSummary,
    policy: SamplingPolicy,
    *,
    server: str,
    store: ApprovalStore | None,
) -> SamplingResult:
    if summary.max_tokens is not None and summary.max_tokens > policy.max_tokens:
        raise SamplingRejected("max_tokens_exceeded")
    if (
        policy.allowed_models
        and summary.requested_model is not None
        and summary.requested_model not in policy.allowed_models
    ):
        raise SamplingRejected("model_not_allowed")
    if policy.mode == "reviewed_model":
        await _review(summary, policy, server=server, store=store)
    if policy.mode == "deny":
        raise SamplingRejected("sampling_disabled")
    if policy.mode not in MODES:
        raise SamplingRejected("unknown_mode")
    return await _delegate(params, summary, policy, server=server)


async def _review(
    summary: SamplingSummary, policy: SamplingPolicy, *, server: str, store: ApprovalStore | None
) -> None:
    reviewer = policy.reviewer
    if reviewer is None:
        raise SamplingRejected("reviewer_required")
    if reviewer == "ops_approval":
        reviewer = ops_approval_reviewer(
            server, store=store, context=policy.approval_context, timeout=policy.approval_timeout
        )
    assert callable(reviewer)
    try:
        verdict = reviewer(summary)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:  # a failing reviewer is a refusal, never a crash of the session
        logger.warning("sampling reviewer for %s failed: %s", server, type(exc).__name__)
        raise SamplingRejected("review_failed") from exc
    if verdict is True or (isinstance(verdict, str) and verdict in _APPROVE):
        return
    if verdict is False or verdict == "reject":
        raise SamplingRejected("review_rejected")
    if isinstance(verdict, tuple) and len(verdict) == 2 and verdict[0] == "reject":
        raise SamplingRejected("review_rejected", detail=str(verdict[1]))
    raise SamplingRejected("invalid_review_result")


async def _delegate(
    params: types.CreateMessageRequestParams,
    summary: SamplingSummary,
    policy: SamplingPolicy,
    *,
    server: str,
) -> SamplingResult:
    if policy.delegate is None:
        raise SamplingRejected("delegate_required")
    try:
        answer = policy.delegate(params, summary)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:  # the host's model call failed; the server gets a refusal
        logger.warning("sampling delegate for %s failed: %s", server, type(exc).__name__)
        raise SamplingRejected("delegate_failed") from exc
    if isinstance(answer, types.CreateMessageResult | types.CreateMessageResultWithTools):
        return answer
    if isinstance(answer, Mapping):
        try:
            if isinstance(answer.get("content"), list):
                return types.CreateMessageResultWithTools.model_validate(dict(answer))
            return types.CreateMessageResult.model_validate(dict(answer))
        except ValidationError:
            pass
    raise SamplingRejected("invalid_delegate_result")


def sampling_callback(
    server: str,
    policy: SamplingPolicy | Mapping[str, Any] | None,
    *,
    delegate: DelegateFn | None = None,
    store: ApprovalStore | None = None,
) -> SamplingFnT | None:
    """The SDK ``sampling_callback`` for one server, or None when sampling is not configured.

    ``policy`` is a :class:`SamplingPolicy` or the server's ``sampling`` config object;
    ``delegate`` (the host's model call) fills in a policy without one. Returning None keeps the
    SDK from advertising the sampling capability.

    Raises:
        ConfigError: the ``sampling`` config is invalid.
    """
    if policy is None:
        return None
    resolved = policy if isinstance(policy, SamplingPolicy) else parse_policy(policy)
    if resolved.delegate is None and delegate is not None:
        resolved = _replace_delegate(resolved, delegate)

    async def callback(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> SamplingResult | types.ErrorData:
        return await handle(params, resolved, server=server, store=store)

    return callback


def _replace_delegate(policy: SamplingPolicy, delegate: DelegateFn) -> SamplingPolicy:
    from dataclasses import replace

    return replace(policy, delegate=delegate)


def validate_policy(raw: Any) -> list[str]:
    """Every problem with a ``sampling`` config object or policy (empty when valid)."""
    return [] if isinstance(raw, SamplingPolicy) else _validate_config(raw)


def parse_policy(raw: Mapping[str, Any]) -> SamplingPolicy:
    """Build a policy from a ``sampling`` config object (JSON keys as in the design document).

    Raises:
        ConfigError: with every problem :func:`validate_policy` finds.
    """
    errors = validate_policy(raw)
    if errors:
        raise ConfigError("; ".join(errors))
    reviewer = raw.get("reviewer")
    if reviewer in OPS_APPROVAL or (reviewer is None and raw.get("require_approval") is True):
        reviewer = "ops_approval"
    max_tokens = raw.get("max_tokens", raw.get("maxTokens", DEFAULT_MAX_TOKENS))
    context = raw.get("approval_context") or {}
    return SamplingPolicy(
        mode=raw.get("mode", "deny"),
        max_tokens=int(max_tokens),
        allowed_models=tuple(raw.get("allowed_models") or ()),
        reviewer=reviewer,
        delegate=raw.get("delegate"),
        approval_timeout=int(raw.get("approval_timeout_ms", DEFAULT_APPROVAL_TIMEOUT_S * 1000))
        / 1000,
        approval_context=ApprovalContext(
            run_id=context.get("run_id"),
            session_key=context.get("session_key"),
            agent_id=context.get("agent_id"),
        ),
    )
