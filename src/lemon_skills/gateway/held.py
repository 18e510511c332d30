"""Upstream elicitation and sampling for a 2026-07-28 host: the host cannot be sent a request
while its call runs, so the upstream call is held open in the gateway's task group, the
upstream's request goes back as an input-required result whose ``requestState`` names the held
call, and the host's retry hands its answer to the waiting upstream.

The state is sealed by the SDK's ``RequestStateBoundary`` (see ``gateway/rounds``); inside it
the held call is found by an unguessable id and must belong to the retrying client. A held call
whose host does not answer within ``timeout`` seconds is cancelled upstream.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from lemon_skills.errors import McpToolError
from lemon_skills.gateway.clients import Calling

#: The key of the upstream's request in the input-required result and the host's answers.
UPSTREAM = "upstream"
DEFAULT_TIMEOUT_S = 300.0


def _pair(size: int) -> tuple[MemoryObjectSendStream[Any], MemoryObjectReceiveStream[Any]]:
    return anyio.create_memory_object_stream[Any](size)


@dataclass(eq=False)
class Held:
    """One upstream call of one client, running apart from the request that started it."""

    id: str
    client: str
    #: Which question of the call is open (an answer to an earlier one never applies to it).
    round: int = 0
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    events: tuple[MemoryObjectSendStream[Any], MemoryObjectReceiveStream[Any]] = field(
        default_factory=lambda: _pair(1)
    )
    answers: tuple[MemoryObjectSendStream[Any], MemoryObjectReceiveStream[Any]] = field(
        default_factory=lambda: _pair(1)
    )


def holds(ctx: Any) -> bool:
    """A 2026-07-28 host that can answer an upstream's elicitation or sampling request."""
    if getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        return False
    caps = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    return caps is not None and (caps.elicitation is not None or caps.sampling is not None)


class HeldCalls:
    """The held calls of the gateway, by id and by the ``Calling`` they serve."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = timeout
        self._by_id: dict[str, Held] = {}
        self._by_calling: dict[int, Held] = {}

    async def run(self, tg: TaskGroup, who: Calling, call: Callable[[], Awaitable[Any]]) -> Any:
        """Start ``call`` held for ``who``; its result, or the input-required result of the
        first upstream request it makes."""
        held = Held(secrets.token_urlsafe(24), who.client.key)
        self._by_calling[id(who)] = held

        async def drive() -> None:
            outcome: tuple[str, Any] = ("failed", _expired())
            with held.scope:
                try:
                    outcome = ("done", await call())
                except Exception as exc:  # re-raised in the request waiting for it
                    outcome = ("failed", exc)
            self._by_calling.pop(id(who), None)
            if held.scope.cancel_called:  # timed out or given up
                outcome = ("failed", _expired())
            with contextlib.suppress(anyio.WouldBlock):  # nobody waits: dropped
                held.events[0].send_nowait(outcome)

        tg.start_soon(drive)
        return await self._next(held)

    async def resume(self, who: Calling) -> Any | None:
        """The retry of a held call: its answer delivered, then what the call does next; None
        when this request names no held call of this client."""
        params = getattr(who.ctx, "params", None) or {}
        state, responses = params.get("requestState"), params.get("inputResponses")
        try:
            claims = json.loads(state) if isinstance(state, str) else None
        except ValueError:
            return None
        if not isinstance(claims, dict) or "held" not in claims:
            return None
        held = self._by_id.get(str(claims["held"]))
        if held is None or held.client != who.client.key or claims.get("round") != held.round:
            raise _expired()
        answer = responses.get(UPSTREAM) if isinstance(responses, Mapping) else None
        if answer is not None:  # one answer per question: a replayed state finds nothing
            del self._by_id[held.id]
        else:  # the call stays held for a retry that answers
            raise McpToolError(
                f"the retry carried no answer to the server's question (inputResponses.{UPSTREAM})",
                hint="retry with the answer and the same requestState",
            )
        await held.answers[0].send(answer)
        return await self._next(held)

    def of(self, who: Calling | None) -> Held | None:
        return None if who is None else self._by_calling.get(id(who))

    async def ask(self, held: Held, request: Any, result_type: Any) -> Any:
        """Called by the upstream's request handler: wait for the host's answer; cancel the
        call upstream when none comes in time."""
        await held.events[0].send(("ask", request))
        answer: Any = None
        with anyio.move_on_after(self.timeout):
            answer = await held.answers[1].receive()
        if answer is None:
            self._by_id.pop(held.id, None)
            held.scope.cancel()
            raise TimeoutError("the host did not answer the server's request")
        return result_type.model_validate(answer)

    async def _next(self, held: Held) -> Any:
        try:
            kind, value = await held.events[1].receive()
        except anyio.get_cancelled_exc_class():
            held.scope.cancel()  # the host gave up on its call
            raise
        if kind == "ask":
            held.round += 1
            self._by_id[held.id] = held
            state = json.dumps({"held": held.id, "round": held.round}, separators=(",", ":"))
            return types.InputRequiredResult(input_requests={UPSTREAM: value}, request_state=state)
        if kind == "failed":
            raise value
        return value


def _expired() -> McpToolError:
    return McpToolError(
        "no call waits for this answer: its server's question was answered already, or "
        "was not answered in time (the call was then cancelled), or the gateway restarted",
        hint="call the tool again",
    )
