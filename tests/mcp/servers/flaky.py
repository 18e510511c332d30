"""A server that misbehaves on purpose, for timeouts, cancellation and reconnection (stdio or
an in-process Streamable HTTP app).

Tools: ``long(seconds, every)`` reports progress every ``every`` s and answers after
``seconds`` (a cancelled run leaves ``cancelled`` in the state directory); ``crash`` counts
its run in ``crash.runs`` and then takes the process down before answering; ``count``
counts its runs in ``count.runs``.
Resource ``flaky://once``: the first read ever (``once.seen`` absent) kills the process,
later reads answer ``second time``. The state directory is ``$FLAKY_DIR``; a dying process
writes ``$FLAKY_LAST_WORDS`` (default ``flaky: going down now``) to stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer


def _state() -> Path:
    return Path(os.environ["FLAKY_DIR"])


def _bump(name: str) -> int:
    path = _state() / name
    runs = int(path.read_text(encoding="utf-8")) + 1 if path.exists() else 1
    path.write_text(str(runs), encoding="utf-8")
    return runs


def _die() -> None:
    sys.stderr.write(os.environ.get("FLAKY_LAST_WORDS", "flaky: going down now") + "\n")
    sys.stderr.flush()
    os._exit(7)


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="Flaky Fixture", log_level="WARNING")

    @server.tool()
    async def long(seconds: float, every: float, ctx: Context) -> str:
        """Work for ``seconds``, reporting progress every ``every`` seconds."""
        steps = max(1, round(seconds / every))
        try:
            for i in range(steps):
                await anyio.sleep(every)
                await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        except anyio.get_cancelled_exc_class():
            (_state() / "cancelled").write_text("yes", encoding="utf-8")
            raise
        return "done"

    @server.tool()
    def crash() -> str:
        """Count the run, then go down without answering."""
        _bump("crash.runs")
        _die()
        return "unreachable"

    @server.tool()
    def count() -> int:
        """Count the run and answer the count."""
        return _bump("count.runs")

    @server.resource("flaky://once", name="Once", mime_type="text/plain")
    def once() -> str:
        marker = _state() / "once.seen"
        if not marker.exists():
            marker.write_text("1", encoding="utf-8")
            _die()
        return "second time"

    return server


def http_app() -> Any:
    """The Streamable HTTP app (``/mcp``)."""
    return build().streamable_http_app()


if __name__ == "__main__":
    build().run()
