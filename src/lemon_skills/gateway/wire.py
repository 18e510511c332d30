"""``tools/list`` without the SDK's result pass.

The SDK's server dumps a handler's result, validates the dump against the protocol version's
result model and dumps it again: for a thousand upstream tool definitions that is hundreds of
milliseconds per listing, every time, for definitions that change only with the catalogue.
This middleware answers ``tools/list`` itself from definitions dumped once per catalogue
generation (every one of them built as an SDK ``Tool``, so already validated), with the
envelope the runner would add on a 2026-07-28 session. Every other request passes through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.types import SERVER_INFO_META_KEY
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from lemon_skills.gateway.catalog import dump
from lemon_skills.tools.serve.server import CACHE_HINTS

Visible = Callable[[Any], Awaitable[tuple[list[Any], list[tuple[Any, str]], list[Any]]]]


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
        tools = [*map(dump, own), *(lst.wire_tool(n) for lst, n in rows), *map(dump, extra)]
        out: dict[str, Any] = {"tools": tools}
        if modern:
            # Lists differ per client and change with tool_search: never reused unasked.
            out.update(CACHE_HINTS, resultType="complete")
            out["_meta"] = {SERVER_INFO_META_KEY: self.server.server_info_stamp}
        return out
