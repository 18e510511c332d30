"""Asking a 2026-07-28 host mid-call: such a host cannot be sent a request while its call runs,
so the call is answered with an input-required result (the question, plus a ``requestState``
naming what was asked) and the host retries it with the answer.

The ``requestState`` is sealed by the SDK's ``RequestStateBoundary`` on the way out and checked
on the way back (expiry, the same request, the same principal); inside it names the client and
the exact call (a digest), and a ticket that one answer spends, so an answer never applies to
another client's call, to other arguments, or twice. The ticket is an approval in the approvals
store, so an answer is spent once across every replica sharing that store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, NoReturn

from mcp import types
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from lemon_skills.errors import McpInputRequired
from lemon_skills.gateway.clients import Calling

#: The key of the approval question in the input-required result and the host's answers.
APPROVAL = "lemon_approval"
#: The approvals-store tool name of a question's ticket (never a tool's name: ``mcp_`` aside).
ROUND_TOOL = "gateway-round"


def can_ask(ctx: Any) -> bool:
    """The host declared elicitation and its requests take input-required answers."""
    caps = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    if caps is None or caps.elicitation is None:
        return False
    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def ask(
    who: Calling, request: Mapping[str, Any], params: types.ElicitRequestFormParams, ticket: str
) -> NoReturn:
    """Raise the input-required answer carrying the elicitation ``params`` for this call;
    ``ticket`` (``ROUND_TOOL`` approval id) is what the answer spends."""
    state = {"call": _digest(who, request), "ticket": ticket}
    result = types.InputRequiredResult(
        input_requests={APPROVAL: types.ElicitRequest(params=params)},
        request_state=json.dumps(state, separators=(",", ":")),
    )
    raise McpInputRequired(result)


def answered(who: Calling, request: Mapping[str, Any]) -> tuple[str, types.ElicitResult] | None:
    """The ticket and the host's answer to the question asked about this very call; None
    when this request carries none (first round, another call's state, or a malformed one:
    the host is then asked again). The caller spends the ticket before using the answer."""
    params = getattr(who.ctx, "params", None) or {}
    state, responses = params.get("requestState"), params.get("inputResponses")
    if not isinstance(state, str) or not isinstance(responses, Mapping):
        return None
    try:
        claims = json.loads(state)
        answer = types.ElicitResult.model_validate(responses.get(APPROVAL))
    except (ValueError, ValidationError):
        return None
    if not isinstance(claims, dict) or claims.get("call") != _digest(who, request):
        return None
    ticket = claims.get("ticket")
    return (ticket, answer) if isinstance(ticket, str) else None


def _digest(who: Calling, request: Mapping[str, Any]) -> str:
    call = {k: request.get(k) for k in ("server", "tool", "name", "arguments")}
    doc = json.dumps([who.client.key, call], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()
