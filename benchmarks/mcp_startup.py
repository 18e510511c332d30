"""Time until ten stdio servers are ready (spawned, handshaken, listed) against the slowest alone.

    python benchmarks/mcp_startup.py [--servers 10] [--kind sdk|node|light] [--repeat 5]
                                     [--skip-alone]

``sdk``: the bundled fixture (a Python server on the official SDK; its start-up is mostly CPU:
``import mcp`` takes about a second, so on a 2-core machine ten of them cannot start in the
time of one). ``node``: ``@modelcontextprotocol/server-everything`` (needs
``npm install --prefix <repo> @modelcontextprotocol/server-everything``). ``light``: a
stdlib-only JSON-RPC server that waits ``--delay`` seconds before answering, the shape of a
server whose start-up is I/O-bound (network, package download); it shows what the manager's
concurrency itself costs. Ratios: all together / slowest alone (target at most 1.3x), and
McpSource / the bare SDK starting the same servers concurrently (``mcp.Client`` per server in
one task group, each listing its tools; target at most 1.05x). McpSource and the SDK run in
pairs whose order alternates; the must-hold figure is the median of the per-pair ratios, with
its range. Printed beside the wall times: this process's CPU and the servers' CPU (their
rusage once reaped) per start, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import corpus  # noqa: F401  (its import keeps the run's pins out of the user's agent dir)
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


def measured(fn: Callable[[list[dict[str, Any]]], float], entries: list[dict[str, Any]]) -> Run:
    """One start of every server by ``fn``: wall seconds, this process's CPU seconds and the
    CPU seconds of the servers (reaped children) it started."""
    cpu, kids = time.process_time(), _children_cpu()
    wall = fn(entries)
    return Run(wall, time.process_time() - cpu, _children_cpu() - kids)


class Run(NamedTuple):
    wall: float
    cpu: float
    servers_cpu: float


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--kind", choices=["sdk", "node", "light"], default="sdk")
    parser.add_argument("--delay", type=float, default=1.0, help="light servers' start-up delay")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-alone", action="store_true", help="only McpSource / SDK")
    opts = parser.parse_args()
    entries = [entry(opts.kind, i, opts.delay) for i in range(opts.servers)]
    print(f"kind={opts.kind} servers={opts.servers} repeat={opts.repeat}")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if not opts.skip_alone:
        alone = [statistics.median(ready_time([e]) for _ in range(opts.repeat)) for e in entries]
        print(f"each alone (median of {opts.repeat}): " + " ".join(f"{a:.2f}" for a in alone))
    runs: list[Run] = []
    sdk_runs: list[Run] = []
    for rep in range(opts.repeat):
        # Alternate which starts first, so neither always runs on a machine the other warmed.
        pair = [(runs, ready_time), (sdk_runs, sdk_ready_time)]
        for out, fn in pair if rep % 2 == 0 else pair[::-1]:
            out.append(measured(fn, entries))
    ratios = [a.wall / b.wall for a, b in zip(runs, sdk_runs, strict=True)]
    together = statistics.median(r.wall for r in runs)
    sdk = statistics.median(r.wall for r in sdk_runs)
    if not opts.skip_alone:
        slowest = max(alone)
        print(f"slowest alone: {slowest:.3f} s   all together: {together:.3f} s")
        print(f"ratio: {together / slowest:.2f}x (target <= 1.3x)")
    for label, rs in (("McpSource", runs), ("bare SDK", sdk_runs)):
        print(
            f"{label:<10} ready (median): {statistics.median(r.wall for r in rs):.3f} s wall"
            f"   client CPU {statistics.median(r.cpu for r in rs):.3f} s"
            f"   servers' CPU {statistics.median(r.servers_cpu for r in rs):.3f} s"
        )
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    med = statistics.median(ratios)
    print(
        f"must hold: McpSource / SDK concurrent start, median of {len(ratios)} paired runs: "
        f"{med:.3f}x (range {min(ratios):.3f}-{max(ratios):.3f}; medians {together / sdk:.3f}x)"
        f"  [{'ok' if med <= 1.05 else 'OVER'} <= 1.05]"
    )
    raise SystemExit(0 if med <= 1.05 else 1)


if __name__ == "__main__":
    main()
