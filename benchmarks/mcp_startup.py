"""Time until ten stdio servers are ready (spawned, handshaken, listed) against the slowest alone.

    python benchmarks/mcp_startup.py [--servers 10] [--kind sdk|node|light] [--repeat 3]

``sdk``: the bundled fixture (a Python server on the official SDK; its start-up is mostly CPU:
``import mcp`` takes about a second, so on a 2-core machine ten of them cannot start in the
time of one). ``node``: ``@modelcontextprotocol/server-everything`` (needs
``npm install --prefix <repo> @modelcontextprotocol/server-everything``). ``light``: a
stdlib-only JSON-RPC server that waits ``--delay`` seconds before answering, the shape of a
server whose start-up is I/O-bound (network, package download); it shows what the manager's
concurrency itself costs. Ratios: all together / slowest alone (target at most 1.3x), and
McpSource / the bare SDK starting the same servers concurrently (``mcp.Client`` per server in
one task group, each listing its tools; runs alternate; target at most 1.05x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from lemon_skills.mcp.source import McpSource

REPO = Path(__file__).resolve().parents[1]
LIGHT = Path(__file__).resolve().parent / "_light_server.py"
EVERYTHING = REPO / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"


def entry(kind: str, i: int, delay: float) -> dict[str, Any]:
    name = f"s{i}"
    if kind == "sdk":
        return {
            "name": name,
            "command": sys.executable,
            "args": ["-m", "lemon_skills.selftest.fixtures.server"],
        }
    if kind == "node":
        return {"name": name, "command": "node", "args": [str(EVERYTHING), "stdio"]}
    return {"name": name, "command": sys.executable, "args": [str(LIGHT), "--delay", str(delay)]}


def ready_time(entries: list[dict[str, Any]]) -> float:
    """Seconds from a fresh source to every server connected and listed."""
    t = time.perf_counter()
    with McpSource(entries, include_config=False) as source:
        source.discover_tools()
        elapsed = time.perf_counter() - t
        down = [n for n, s in source.status()["servers"].items() if not s["connected"]]
    if down:
        raise SystemExit(f"servers failed to start: {down}")
    return elapsed


def sdk_ready_time(entries: list[dict[str, Any]]) -> float:
    """Seconds until bare SDK clients, started concurrently, have all listed their tools."""

    async def run() -> float:
        t = time.perf_counter()
        done = anyio.Event()
        ready: list[float] = []

        async def one(e: dict[str, Any]) -> None:
            params = StdioServerParameters(command=e["command"], args=e["args"])
            async with Client(params) as client:
                await client.list_tools()
                ready.append(time.perf_counter() - t)
                if len(ready) == len(entries):
                    done.set()
                await done.wait()

        async with anyio.create_task_group() as tg:
            for e in entries:
                tg.start_soon(one, e)
        return max(ready)

    return anyio.run(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--kind", choices=["sdk", "node", "light"], default="sdk")
    parser.add_argument("--delay", type=float, default=1.0, help="light servers' start-up delay")
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    entries = [entry(opts.kind, i, opts.delay) for i in range(opts.servers)]
    alone = [statistics.median(ready_time([e]) for _ in range(opts.repeat)) for e in entries]
    cpu = time.process_time()
    runs, sdk_runs = [], []
    for _ in range(opts.repeat):
        runs.append(ready_time(entries))
        sdk_runs.append(sdk_ready_time(entries))
    together, sdk = statistics.median(runs), statistics.median(sdk_runs)
    cpu = (time.process_time() - cpu) / opts.repeat
    slowest = max(alone)
    print(f"kind={opts.kind} servers={opts.servers} repeat={opts.repeat}")
    print(f"each alone (median of {opts.repeat}): " + " ".join(f"{a:.2f}" for a in alone))
    print(f"slowest alone: {slowest:.3f} s   all together: {together:.3f} s")
    print(f"ratio: {together / slowest:.2f}x (target <= 1.3x)")
    print(f"bare SDK, all together: {sdk:.3f} s   McpSource / SDK: {together / sdk:.2f}x")
    print(f"client CPU per round (both): {cpu:.3f} s (the rest is the servers' own start-up)")


if __name__ == "__main__":
    main()
