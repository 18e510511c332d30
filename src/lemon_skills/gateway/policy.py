"""The decisions the gateway takes to the host: approving a tool call (elicitation when the
host can answer, else the approvals store), and upstream elicitation and sampling requests,
forwarded to the one host whose call is in flight on that server.

``McpSource`` applies the policy (which calls need approval, pinning, result caps); these are
the callbacks it is given, so the policy is the same one every other host of it gets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import anyio.to_thread
from mcp import types
from mcp.shared.message import ServerMessageMetadata

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import LemonSkillsError, McpToolError
from lemon_skills.gateway import rounds
from lemon_skills.gateway.clients import Calling, Client, calling
from lemon_skills.gateway.held import HeldCalls
from lemon_skills.mcp.config.entries import ServerConfig
from lemon_skills.mcp.sampling.handler import SamplingSummary

DECISIONS = ("once", "always", "deny")
_ASK: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "enum": list(DECISIONS),
            "description": "once: run this call; always: run this tool without asking again "
            "(this connection only); deny: do not run it",
        }
    },
    "required": ["decision"],
}


class Inflight:
    """Which hosts have a call running on which server (for upstream requests to find their
    host)."""

    def __init__(self) -> None:
        self._by_server: dict[str, dict[int, Calling]] = {}

    @contextmanager
    def call(self, server: str, who: Calling) -> Iterator[None]:
        """Mark ``who`` as calling ``server`` for the block's length."""
        calls = self._by_server.setdefault(server, {})
        calls[id(who)] = who
        try:
            yield
        finally:
            calls.pop(id(who), None)

    def sole(self, server: str | None) -> Calling | None:
        """The one host with a call in flight on ``server``; None when none or several (a
        request from a shared server is never shown to a host that may not be its cause)."""
        calls = list(self._by_server.get(server or "", {}).values())
        keys = {c.client.key for c in calls}
        return calls[-1] if len(keys) == 1 else None


class Approver:
    """``McpSource(approve_call=...)`` for the gateway: asks the calling host."""

    def __init__(self, store: ApprovalStore | None = None) -> None:
        self.store = store or ApprovalStore()

    async def __call__(self, request: dict[str, Any]) -> bool:
        who = calling.get()
        if who is None:
            return False
        name = str(request["name"])
        if name in who.client.always:
            return True
        if _can_elicit(who.ctx):
            return await self._elicit(who, request)
        if rounds.can_ask(who.ctx):
            got = rounds.answered(who, request)
            if got is not None and await anyio.to_thread.run_sync(self._spend_round, got[0]):
                return _decided(who, request, got[1])
            ticket = await anyio.to_thread.run_sync(self._round_ticket, who.client, request)
            rounds.ask(who, request, _form(_question(request), _ASK), ticket)
        return await anyio.to_thread.run_sync(self._from_store, who.client, request)

    async def _elicit(self, who: Calling, request: Mapping[str, Any]) -> bool:
        ask = types.ElicitRequest(params=_form(_question(request), _ASK))
        try:
            answer = await _send(who.ctx, ask, types.ElicitResult)
        except Exception as exc:  # the host could not answer: nothing runs
            raise McpToolError(f"{request['name']} was not run: approval failed ({exc})") from None
        return _decided(who, request, answer)

    def _round_ticket(self, client: Client, request: Mapping[str, Any]) -> str:
        """An approved ticket the host's in-band answer spends (once, on any replica)."""
        ticket = self.store.create(
            rounds.ROUND_TOOL,
            {"name": request.get("name"), "client": client.key},
            rationale="a 2026-07-28 host is asked in-band; its answer spends this ticket",
            context=ApprovalContext(session_key=client.key, agent_id=client.agent),
        )
        self.store.approve(ticket.id, by="gateway")
        return ticket.id

    def _spend_round(self, ticket: str) -> bool:
        try:
            return self.store.spend(ticket)
        except LemonSkillsError:  # unknown or expired: the host is asked again
            return False

    def _from_store(self, client: Client, request: Mapping[str, Any]) -> bool:
        name = str(request["name"])
        action = {k: request.get(k) for k in ("server", "tool", "name", "arguments")}
        pending = None
        for approval in reversed(self.store.list(status=None, tool=name)):
            mine = approval.context.session_key == client.key
            if not mine or dict(approval.action) != action:
                continue
            if approval.approved and self.store.spend(approval.id):
                return True
            if approval.pending:
                pending = approval
                break
        if pending is None:
            pending = self.store.create(
                name,
                action,
                rationale=f"MCP server {request['server']!r} tool {request['tool']!r} called "
                "through the gateway needs approval (its server's approve policy)",
                context=ApprovalContext(session_key=client.key, agent_id=client.agent),
            )
        raise McpToolError(
            f"{name} needs approval and was not run: approval {pending.id} is pending",
            hint=f"run `lemon approvals approve {pending.id}` (or deny it), then call "
            "the tool again with the same arguments",
        )


class Forwarder:
    """Upstream elicitation and sampling requests, sent on to the host whose call caused
    them (the ``elicitation_factory`` and ``sampling_delegate`` of the gateway's source)."""

    def __init__(self, inflight: Inflight, held: HeldCalls | None = None) -> None:
        self.inflight = inflight
        self.held = held or HeldCalls()

    def elicitation(self, cfg: ServerConfig) -> Any:
        server = cfg.name

        async def forward(context: Any, params: types.ElicitRequestParams) -> Any:
            who = self.inflight.sole(server)
            held = self.held.of(who)
            caps = _caps(who.ctx) if who is not None else None
            if held is not None and caps is not None and caps.elicitation is not None:
                ask = types.ElicitRequest(params=params)
                return await self.held.ask(held, ask, types.ElicitResult)
            if who is None or not _can_elicit(who.ctx):
                return types.ElicitResult(action="decline")
            return await _send(who.ctx, types.ElicitRequest(params=params), types.ElicitResult)

        return forward

    async def sampling(
        self, params: types.CreateMessageRequestParams, summary: SamplingSummary
    ) -> types.CreateMessageResult:
        who = self.inflight.sole(summary.server)
        caps = _caps(who.ctx) if who is not None else None
        held = self.held.of(who)
        if held is not None and caps is not None and caps.sampling is not None:
            ask = types.CreateMessageRequest(params=params)
            answer: types.CreateMessageResult = await self.held.ask(
                held, ask, types.CreateMessageResult
            )
            return answer
        pushable = who is not None and getattr(who.ctx.session, "can_send_request", True)
        if who is None or caps is None or caps.sampling is None or not pushable:
            raise McpToolError("no host to ask: the calling host cannot sample", server=None)
        request = types.CreateMessageRequest(params=params)
        result: types.CreateMessageResult = await _send(who.ctx, request, types.CreateMessageResult)
        return result


def _question(request: Mapping[str, Any]) -> str:
    args = json.dumps(request.get("arguments") or {}, ensure_ascii=False)[:2000]
    return (
        f"Run tool {request['tool']!r} of MCP server {request['server']!r} with arguments {args}?"
    )


def _decided(who: Calling, request: Mapping[str, Any], answer: types.ElicitResult) -> bool:
    decision = (answer.content or {}).get("decision") if answer.action == "accept" else None
    if decision == "always":
        who.client.always.add(str(request["name"]))
    return decision in ("once", "always")


async def _send(ctx: Any, request: Any, result_type: Any) -> Any:
    meta = ServerMessageMetadata(related_request_id=ctx.request_id)
    return await ctx.session.send_request(request, result_type, metadata=meta)


def _form(message: str, schema: types.ElicitRequestedSchema) -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams(message=message, requested_schema=schema)


def _caps(ctx: Any) -> types.ClientCapabilities | None:
    session = getattr(ctx, "session", None)
    return getattr(session, "client_capabilities", None)


def _can_elicit(ctx: Any) -> bool:
    """The host declared elicitation and this request can carry a request to it (a
    2026-07-28 request over stdio cannot: the host then gets the approvals-store path)."""
    caps = _caps(ctx)
    if caps is None or caps.elicitation is None:
        return False
    return bool(getattr(ctx.session, "can_send_request", True))
