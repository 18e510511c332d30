"""Per-call latency through McpSource against the bare SDK session, on the same server.

    python benchmarks/mcp_call_overhead.py [--calls 2000] [--blocks 4]

Both paths talk to the bundled echo fixture over stdio (one server process each, same
program). Calls run in alternating blocks so machine noise hits both alike. Reported: median,
p90, p99 per call and the overhead ratio of McpSource over the bare ``mcp.Client`` for

* ``source.acall_tool`` inside ``async with McpSource()`` (same event loop as the bare client),
* ``source_sdk_reader``: the same, but that source's server was connected over the SDK's
  ``stdio_client`` instead of lemon's stdio transport (the A/B for the transport alone),
* ``source.call_tool`` from synchronous code (the loop driven by the calling thread), against
  a bare client on the same loop driven the same way once per call (``bare_sync``, what a
  synchronous caller of the SDK pays), and against that client timed inside the loop
  (``bare_in_loop``, which pays no loop drive at all).

Also reported per path: this process's CPU time per call (``time.process_time`` around each
block), which a loaded machine disturbs much less than wall-clock latency; the servers' CPU
is not in it, so it is what the client side of each path costs.

Target: at most 5 % overhead (DESIGN.md section 8).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

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


Samples = dict[str, list[float]]


def add_block(results: Samples, cpu: Samples, name: str, block: Callable[[], list[float]]) -> None:
    started = time.process_time()
    results[name] += block()
    cpu[name].append(time.process_time() - started)


@contextmanager
def sdk_stdio_transport() -> Iterator[None]:
    """Connections opened inside use the SDK's ``stdio_client`` (they keep it afterwards)."""
    import lemon_skills.mcp.connect as connect

    own = connect.stdio_transport
    connect.stdio_transport = stdio_client  # type: ignore[assignment]
    try:
        yield
    finally:
        connect.stdio_transport = own


async def async_run(calls: int, blocks: int, warmup: int) -> tuple[Samples, Samples]:
    params = StdioServerParameters(command=ENTRY["command"], args=ENTRY["args"])
    results: Samples = {"bare": [], "bare_timeout": [], "source_async": [], "source_sdk_reader": []}
    cpu: Samples = {name: [] for name in results}
    async with (
        Client(params) as bare,
        McpSource([ENTRY], include_config=False) as source,
        McpSource([ENTRY], include_config=False) as sdk_reader,
    ):
        await source.adiscover_tools()
        with sdk_stdio_transport():
            await sdk_reader.adiscover_tools()
        paths = {
            "bare": lambda: bare.call_tool("echo", ARGS),
            # The same per-call timeout McpSource always sets (entry timeout_ms, 60 s).
            "bare_timeout": lambda: bare.call_tool("echo", ARGS, read_timeout_seconds=60.0),
            "source_async": lambda: source.acall_tool("mcp_fx_echo", ARGS),
            "source_sdk_reader": lambda: sdk_reader.acall_tool("mcp_fx_echo", ARGS),
        }
        for call in paths.values():
            await timed(call, warmup)
        per_block = max(1, calls // blocks)
        names = list(paths)
        for block in range(blocks):
            # Rotate the order so no path always runs first (or right after another).
            turn = block % len(names)
            for name in names[turn:] + names[:turn]:
                started = time.process_time()
                results[name] += await timed(paths[name], per_block)
                cpu[name].append(time.process_time() - started)
    return results, cpu


def sync_run(calls: int, blocks: int, warmup: int) -> tuple[Samples, Samples]:
    """``source.call_tool`` from sync code, interleaved with a bare client that lives on the
    same private loop (timed inside the loop, i.e. without any loop start/stop)."""
    params = StdioServerParameters(command=ENTRY["command"], args=ENTRY["args"])
    results: Samples = {"bare_in_loop": [], "bare_sync": [], "source_sync": []}
    cpu: Samples = {name: [] for name in results}
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
            order = [
                ("bare_in_loop", lambda: bare_block(per_block)),
                ("bare_sync", lambda: timed_sync(bare_sync, per_block)),
                ("source_sync", lambda: timed_sync(call, per_block)),
            ]
            for name, run in order[::-1] if block % 2 else order:
                add_block(results, cpu, name, run)
        loop.run(stop)
    return results, cpu


def report(title: str, measured: tuple[Samples, Samples], base_name: str) -> None:
    results, cpu = measured
    base = summary(results[base_name])
    cpu_per_call = {n: sum(cpu[n]) / len(results[n]) * 1e6 for n in results}
    print(f"\n{title} (overhead against {base_name})")
    print(
        f"{'path':<18} {'median':>8} {'mean':>8} {'p90':>8} {'p99':>8}  overhead median / mean"
        "   client CPU per call (overhead)"
    )
    for name, samples in results.items():
        s = summary(samples)
        ratio_med = s["median_ms"] / base["median_ms"] - 1
        ratio_mean = s["mean_ms"] / base["mean_ms"] - 1
        ratio_cpu = cpu_per_call[name] / cpu_per_call[base_name] - 1
        print(
            f"{name:<18} {s['median_ms']:7.3f}ms {s['mean_ms']:7.3f}ms {s['p90_ms']:7.3f}ms "
            f"{s['p99_ms']:7.3f}ms  {ratio_med:+.1%} / {ratio_mean:+.1%}   (n={len(samples)})"
            f"   {cpu_per_call[name]:6.0f} us ({ratio_cpu:+.1%})"
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
