"""A server that changes under its host on purpose (stdio): ``grow`` adds the tool ``extra``
and sends ``tools/list_changed``; ``confirm`` asks the host through elicitation (an
input-required result on 2026-07-28, a push on older sessions);
``counted(n)`` counts its runs in ``$SHIFTY_DIR/counted.runs`` (to prove a call never got
there); ``slow(seconds)`` counts its starts in ``$SHIFTY_DIR/slow.runs``, then sleeps."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Annotated, Any

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel


class Answer(BaseModel):
    ok: bool


def _ask() -> Elicit[Answer]:
    return Elicit("Really do it?", Answer)


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="Shifty Fixture", log_level="WARNING")

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool extra and say so."""

        def extra() -> str:
            """A tool that was not there at first."""
            return "extra!"

        server.add_tool(extra)
        await ctx.notify_tools_changed()  # 2026-07-28: the subscriptions/listen stream
        with contextlib.suppress(Exception):  # handshake era: a notification
            await ctx.request_context.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    def confirm(answer: Annotated[ElicitationResult[Answer], Resolve(_ask)]) -> str:
        """Ask the host to confirm, and say what it answered."""
        return f"{answer.action}:{getattr(getattr(answer, 'data', None), 'ok', None)}"

    @server.tool()
    def counted(n: int) -> int:
        """Count the run."""
        path = Path(os.environ["SHIFTY_DIR"]) / "counted.runs"
        runs = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(runs))
        return runs

    @server.tool()
    async def slow(seconds: float) -> int:
        """Count the start, then take a while."""
        import anyio

        path = Path(os.environ["SHIFTY_DIR"]) / "slow.runs"
        runs = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(runs))
        await anyio.sleep(seconds)
        return runs

    return server


if __name__ == "__main__":
    build().run()
