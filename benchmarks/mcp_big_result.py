"""A 50 MB tool result through McpSource: what the model gets, what the file holds, peak RSS.

    python benchmarks/mcp_big_result.py [--mb 50] [--budget 25000]

A stdio fixture server (its own process, not measured) answers one tools/call with ``--mb``
megabytes of text. Reported: the model-facing text in estimated tokens against the budget,
whether the saved file holds the whole result, and this process's peak RSS (``ru_maxrss``)
before and after the call, as a multiple of the result size. Target: the text under the
budget, the file complete, peak RSS under 3x the result size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

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


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--budget", type=int, default=25_000)
    opts = parser.parse_args()
    size = int(opts.mb * 1024 * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ["LEMON_AGENT_DIR"] = tmp
        from lemon_skills.mcp.source import McpSource
        from lemon_skills.tool import estimate_tokens

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
            before = peak_mb()
            started = time.perf_counter()
            result = source.call_tool("mcp_big_big", {"size": size})
            took = time.perf_counter() - started
            after = peak_mb()
            path = Path(result.details["spilled"]["path"])
            on_disk = path.stat().st_size
        result_mb = size / 1024 / 1024
        print(f"result: {result_mb:.1f} MB of text in {took:.2f} s")
        print(
            f"model-facing text: {estimate_tokens(result.text):,} tokens (budget {opts.budget:,})"
        )
        print(f"file: {on_disk:,} bytes of {size:,} ({'complete' if on_disk == size else 'SHORT'})")
        print(f"peak RSS: {before:.0f} MB before the call, {after:.0f} MB after")
        print(
            f"peak RSS / result size: {after / result_mb:.2f}x total, "
            f"{(after - before) / result_mb:.2f}x added by the call"
        )


if __name__ == "__main__":
    main()
