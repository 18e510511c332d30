"""``tools/list`` without the SDK's result pass, and its JSON written without a dump.

The SDK's server dumps a handler's result, validates the dump against the protocol version's
result model and dumps it again: for a thousand upstream tool definitions that is hundreds of
milliseconds per listing, every time, for definitions that change only with the catalogue.
This middleware answers ``tools/list`` itself from definitions dumped once per catalogue
generation (every one of them built as an SDK ``Tool``, so already validated), with the
envelope the runner would add on a 2026-07-28 session. Every other request passes through.

The definitions' JSON is made once per generation too: the list the middleware returns is an
``Encoded`` list that carries it, and ``encode`` (the stdio writer's) splices those bytes into
the response instead of serialising a thousand dicts again. Any other writer (HTTP) sees a
plain list of the same dicts and serialises it as usual.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.types import SERVER_INFO_META_KEY, JSONRPCMessage, JSONRPCResponse
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import to_json

from lemon_skills.gateway.catalog import dump
from lemon_skills.tools.serve.server import CACHE_HINTS

Visible = Callable[[Any], Awaitable[tuple[list[Any], list[tuple[Any, str]], list[Any]]]]


class Encoded(list[Any]):
    """A list of JSON values that also holds its own JSON (``json``)."""

    json: bytes = b"[]"


class ListingFastPath:
    """A server middleware: ``tools/list`` from cached wire forms."""

    def __init__(self, visible: Visible, server: Any) -> None:
        self.visible = visible
        self.server = server

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if ctx.method != "tools/list" or ctx.request_id is None:
            return await call_next(ctx)
        if not modern and ctx.session.client_params is None:
            return await call_next(ctx)  # before the handshake: the runner's own refusal
        own, rows, extra = await self.visible(ctx)
        forms = [_form(t) for t in own]
        forms += [lst.wire_tool(n) for lst, n in rows]
        forms += [_form(t) for t in extra]
        tools = Encoded(form for form, _ in forms)
        tools.json = b"[" + b",".join(data for _, data in forms) + b"]"
        out: dict[str, Any] = {"tools": tools}
        if modern:
            # Lists differ per client and change with tool_search: never reused unasked.
            out.update(CACHE_HINTS, resultType="complete")
            out["_meta"] = {SERVER_INFO_META_KEY: self.server.server_info_stamp}
        return out


def encode(message: JSONRPCMessage) -> bytes:
    """``message`` as one JSON line (no newline), ``Encoded`` values spliced in as they are."""
    if not isinstance(message, JSONRPCResponse) or not any(
        type(v) is Encoded for v in message.result.values()
    ):
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    result = message.result
    body = b",".join(
        to_json(k) + b":" + (v.json if type(v) is Encoded else to_json(v))
        for k, v in result.items()
    )
    return b'{"jsonrpc":"2.0","id":' + to_json(message.id) + b',"result":{' + body + b"}}"


def _form(tool: Any) -> tuple[dict[str, Any], bytes]:
    form = dump(tool)
    return form, to_json(form)
