"""Per-call latency through McpSource against the bare SDK session, on the same server.

    python benchmarks/mcp_call_overhead.py [--calls 2000] [--blocks 4]

Both paths talk to the bundled echo fixture over stdio (one server process each, same
program). Calls run in alternating blocks so machine noise hits both alike. Reported: median,
p90, p99 per call and the overhead ratio of McpSource over the bare ``mcp.Client`` for

* ``source.acall_tool`` inside ``async with McpSource()`` (same event loop as the bare client),
* ``source.call_tool`` from synchronous code (the loop driven by the calling thread), against
  a bare client on the same loop driven the same way once per call (``bare_sync``, what a
  synchronous caller of the SDK pays), and against that client timed inside the loop
  (``bare_in_loop``, which pays no loop drive at all).

Target: at most 5 % overhead (DESIGN.md section 8).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from lemon_skills.mcp.source import McpSource

ENTRY = {
    "name": "fx",
    "command": sys.executable,
    "args": ["-m", "lemon_skills.selftest.fixtures.server"],
}
ARGS = {"message": "ok"}


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "mean_ms": statistics.fmean(ordered) * 1000,
        "p90_ms": pick(0.90) * 1000,
        "p99_ms": pick(0.99) * 1000,
    }


async def timed(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        out.append(time.perf_counter() - t)
    return out


def timed_sync(call: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        out.append(time.perf_counter() - t)
    return out


async def async_run(calls: int, blocks: int, warmup: int) -> dict[str, list[float]]:
    params = StdioServerParameters(command=ENTRY["command"], args=ENTRY["args"])
    results: dict[str, list[float]] = {"bare": [], "bare_timeout": [], "source_async": []}
    async with Client(params) as bare, McpSource([ENTRY], include_config=False) as source:
        await source.adiscover_tools()
        paths = {
            "bare": lambda: bare.call_tool("echo", ARGS),
            # The same per-call timeout McpSource always sets (entry timeout_ms, 60 s).
            "bare_timeout": lambda: bare.call_tool("echo", ARGS, read_timeout_seconds=60.0),
            "source_async": lambda: source.acall_tool("mcp_fx_echo", ARGS),
        }
        for call in paths.values():
            await timed(call, warmup)
        per_block = max(1, calls // blocks)
        names = list(paths)
        for block in range(blocks):
            # Rotate the order so no path always runs first (or right after another).
            for name in names[block % 3 :] + names[: block % 3]:
                results[name] += await timed(paths[name], per_block)
    return results


def sync_run(calls: int, blocks: int, warmup: int) -> dict[str, list[float]]:
    """``source.call_tool`` from sync code, interleaved with a bare client that lives on the
    same private loop (timed inside the loop, i.e. without any loop start/stop)."""
    params = StdioServerParameters(command=ENTRY["command"], args=ENTRY["args"])
    results: dict[str, list[float]] = {"bare_in_loop": [], "bare_sync": [], "source_sync": []}
    with McpSource([ENTRY], include_config=False) as source:
        source.discover_tools()
        loop = source._rt.sync
        assert loop is not None
        box: dict[str, Any] = {}

        async def hold_bare() -> None:
            async with Client(params) as bare:
                box["bare"] = bare
                box["ready"].set()
                await box["stop"].wait()

        async def start() -> None:
            box["ready"], box["stop"] = asyncio.Event(), asyncio.Event()
            box["task"] = asyncio.get_running_loop().create_task(hold_bare())
            await box["ready"].wait()

        async def stop() -> None:
            box["stop"].set()
            await box["task"]

        loop.run(start)

        def bare_block(n: int) -> list[float]:
            return loop.run(lambda: timed(lambda: box["bare"].call_tool("echo", ARGS), n))

        call = lambda: source.call_tool("mcp_fx_echo", ARGS)  # noqa: E731
        # What a synchronous caller of the bare SDK pays: one loop drive per call.
        bare_sync = lambda: loop.run(lambda: box["bare"].call_tool("echo", ARGS))  # noqa: E731
        timed_sync(call, warmup)
        bare_block(warmup)
        timed_sync(bare_sync, warmup)
        per_block = max(1, calls // blocks)
        for block in range(blocks):
            if block % 2:
                results["source_sync"] += timed_sync(call, per_block)
                results["bare_sync"] += timed_sync(bare_sync, per_block)
                results["bare_in_loop"] += bare_block(per_block)
            else:
                results["bare_in_loop"] += bare_block(per_block)
                results["bare_sync"] += timed_sync(bare_sync, per_block)
                results["source_sync"] += timed_sync(call, per_block)
        loop.run(stop)
    return results


def report(title: str, results: dict[str, list[float]], base_name: str) -> None:
    base = summary(results[base_name])
    print(f"\n{title} (overhead against {base_name})")
    print(f"{'path':<14} {'median':>8} {'mean':>8} {'p90':>8} {'p99':>8}  overhead median / mean")
    for name, samples in results.items():
        s = summary(samples)
        ratio_med = s["median_ms"] / base["median_ms"] - 1
        ratio_mean = s["mean_ms"] / base["mean_ms"] - 1
        print(
            f"{name:<14} {s['median_ms']:7.3f}ms {s['mean_ms']:7.3f}ms {s['p90_ms']:7.3f}ms "
            f"{s['p99_ms']:7.3f}ms  {ratio_med:+.1%} / {ratio_mean:+.1%}   (n={len(samples)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=50)
    opts = parser.parse_args()
    report("async", anyio.run(async_run, opts.calls, opts.blocks, opts.warmup), "bare")
    sync = sync_run(opts.calls, opts.blocks, opts.warmup)
    report("sync", sync, "bare_sync")


if __name__ == "__main__":
    main()
