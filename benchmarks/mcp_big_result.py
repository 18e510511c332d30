"""A 50 MB tool result through McpSource: what the model gets, what the file holds, peak RSS.

    python benchmarks/mcp_big_result.py [--mb 50] [--budget 25000] [--reader lemon|sdk] [--stages]

A stdio fixture server (its own process, not measured) answers one tools/call with ``--mb``
megabytes of text. Reported: the model-facing text in estimated tokens against the budget,
whether the saved file holds the whole result, and the memory the call costs this process.

The ratio: (peak RSS during the call - RSS just before it) / result size, i.e. what the call
adds at its worst as a multiple of the result's size (Linux: the peak is ``VmHWM`` after
resetting it through ``/proc/self/clear_refs`` right before the call; elsewhere
``ru_maxrss``, which can only understate the call's cost when an earlier peak was higher).
Target: the text under the budget, the file complete, the ratio under 3.

``--reader sdk`` runs the same call over the SDK's ``stdio_client`` instead of lemon's
stdio transport (the A/B for the reader). ``--stages`` also prints, per stage of the call,
the peak and the RSS at its end, both above the pre-call RSS: reading the line from the pipe,
parsing it into a JSON-RPC message, the session's validation up to lemon's conversion, the
conversion to a ``ToolResult``, and cutting and saving the result (Linux only).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="big", log_level="WARNING")
    LINE = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 line\\n"

    @server.tool(structured_output=False)
    def big(size: int) -> str:
        \"\"\"size characters of text.\"\"\"
        return (LINE * (size // len(LINE) + 1))[:size]

    server.run()
    """
)
PROC = Path("/proc/self")


class Meter:
    """RSS now and its peak since the last mark (MB), with the stages marked so far."""

    def __init__(self) -> None:
        self.linux = (PROC / "clear_refs").exists()
        self.marks: list[tuple[str, float, float]] = []
        self.base = 0.0

    def status(self) -> tuple[float, float]:
        if not self.linux:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            return peak, peak
        text = (PROC / "status").read_text()
        rss, hwm = (int(re.search(rf"{k}:\s+(\d+)", text).group(1)) for k in ("VmRSS", "VmHWM"))  # type: ignore[union-attr]
        return rss / 1024, hwm / 1024

    def start(self) -> None:
        self.base = self.status()[0]
        self.marks.clear()
        self._reset()

    def mark(self, stage: str) -> None:
        rss, peak = self.status()
        self.marks.append((stage, peak, rss))
        self._reset()

    def peak(self) -> float:
        return max(p for _, p, _ in self.marks)

    def _reset(self) -> None:
        if self.linux:
            (PROC / "clear_refs").write_text("5")


def wrap(owner: Any, attr: str, before: str, after: str, meter: Meter, big: int) -> None:
    """Mark ``before`` when ``owner.attr`` is called on a big value, ``after`` when it returns."""
    fn: Callable[..., Any] = getattr(owner, attr)

    def marked(*args: Any, **kwargs: Any) -> Any:
        if not _big(args, big):
            return fn(*args, **kwargs)
        meter.mark(before)
        try:
            return fn(*args, **kwargs)
        finally:
            meter.mark(after)

    setattr(owner, attr, marked)


def _big(args: tuple[Any, ...], big: int) -> bool:
    first = args[0] if args else None
    if isinstance(first, bytes | bytearray | str):
        return len(first) > big
    return len(getattr(first, "text", "")) > big or len(getattr(first, "content", ())) > 0


def instrument(meter: Meter, reader: str, big: int) -> None:
    import mcp.client.stdio

    import lemon_skills.mcp.catalog.calls as calls
    from lemon_skills.mcp.transport import stdio

    if reader == "sdk":
        wrap(mcp.client.stdio, "_parse_line", "read", "parse", meter, big)
    else:
        wrap(stdio, "parse_line", "read", "parse", meter, big)
    wrap(calls, "tool_result", "session validation", "lemon conversion", meter, big)
    wrap(calls, "spill", "(between)", "lemon cut and save", meter, big)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--budget", type=int, default=25_000)
    parser.add_argument("--reader", choices=("lemon", "sdk"), default="lemon")
    parser.add_argument("--stages", action="store_true")
    opts = parser.parse_args()
    size = int(opts.mb * 1024 * 1024)
    meter = Meter()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = tmp
        import lemon_skills.mcp.session.connect as connect
        from lemon_skills.mcp.source import McpSource
        from lemon_skills.tool import estimate_tokens

        if opts.reader == "sdk":
            from mcp.client.stdio import stdio_client

            connect.stdio_transport = stdio_client  # type: ignore[assignment]
        if opts.stages:
            instrument(meter, opts.reader, size // 2)
        script = Path(tmp) / "big_server.py"
        script.write_text(SERVER, encoding="utf-8")
        entry = {
            "name": "big",
            "command": sys.executable,
            "args": [str(script)],
            "max_result_tokens": opts.budget,
            "timeout_ms": 600_000,
        }
        with McpSource([entry], include_config=False) as source:
            source.call_tool("mcp_big_big", {"size": 1000})
            meter.start()
            started = time.perf_counter()
            result = source.call_tool("mcp_big_big", {"size": size})
            took = time.perf_counter() - started
            meter.mark("return")
            path = Path(result.details["spilled"]["path"])
            on_disk = path.stat().st_size
        result_mb = size / 1024 / 1024
        added = meter.peak() - meter.base
        print(f"reader: {opts.reader}; result: {result_mb:.1f} MB of text in {took:.2f} s")
        print(
            f"model-facing text: {estimate_tokens(result.text):,} tokens (budget {opts.budget:,})"
        )
        print(f"file: {on_disk:,} bytes of {size:,} ({'complete' if on_disk == size else 'SHORT'})")
        print(f"RSS before the call: {meter.base:.0f} MB; peak during it: {meter.peak():.0f} MB")
        print(
            f"ratio (peak RSS during the call - RSS before it) / result size: "
            f"{added / result_mb:.2f}  (target < 3)"
        )
        if opts.stages and meter.linux:
            print("stage                      peak above pre-call   RSS at its end")
            for stage, peak, rss in meter.marks:
                print(f"  {stage:24s} {peak - meter.base:10.0f} MB {rss - meter.base:14.0f} MB")


if __name__ == "__main__":
    main()
