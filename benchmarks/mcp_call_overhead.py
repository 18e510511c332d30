"""Per-call latency through McpSource against the bare SDK session, on the same stdio server.

    python benchmarks/mcp_call_overhead.py [--calls 2000] [--rounds 3] [--reps 10] [--parts N]

Every path talks to the bundled echo fixture over stdio (one server process per session, same
program) and every McpSource runs with every policy at its default. A run is ``--rounds``
rounds, each with fresh sessions (so no one server process's luck decides); a round runs
``--reps`` repetitions, and each repetition times a block of ``calls / reps`` calls on every
path, in an order that rotates between repetitions, so machine noise hits all paths alike.

Async paths (one event loop):

* ``bare``: ``mcp.Client.call_tool`` with the SDK's defaults: the baseline.
* ``source_async``: ``source.acall_tool`` inside ``async with McpSource()``.
* ``bare_token`` (diagnostic): the same bare session as ``bare``, passing a progress callback,
  so the request carries ``_meta.progressToken`` as every McpSource call does (progress
  resets the call's timeout). Same server process as ``bare``: its ``server CPU`` column is
  what the token costs the server.
* ``bare_policies`` (diagnostic): the bare session plus what McpSource's default policies do
  on every call: the progress token and a cancel scope carrying the per-call deadline.

Sync paths (McpSource's private loop, driven by the calling thread):

* ``bare_sync``: a bare client living on the same private loop, driven once per call (what a
  synchronous caller of the SDK pays): the baseline.
* ``source_sync``: ``source.call_tool`` from synchronous code.

Reported per path: p50 / p90 of the per-call wall latency over all calls, the client CPU per
call (``time.process_time`` around each block: this process only) and, on Linux, the server
process's CPU per call (``/proc/<pid>/task/*/schedstat``: every thread). Then the must-hold
figures: the ratio of the p50 of McpSource to the p50 of the bare SDK, taken per repetition,
as the median over all repetitions with its range and interquartile range, and the same ratio
for client CPU. Last, the ``parts`` table: what each piece of McpSource's own per-call work
costs alone, in a tight loop (client CPU per call; ``--parts N`` iterations). CPU figures are
much less disturbed by a loaded machine than wall-clock ones; the load average before and
after the run is printed so a reader can tell.

Target: at most 5 % overhead (DESIGN.md section 8).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import corpus  # noqa: F401  (its import keeps the run's pins out of the user's agent dir)
from mcp import Client, StdioServerParameters

from lemon_skills.mcp.source import McpSource

ENTRY = {
    "name": "fx",
    "command": sys.executable,
    "args": ["-m", "lemon_skills.selftest.fixtures.server"],
}
ARGS = {"message": "ok"}
PARAMS = StdioServerParameters(command=ENTRY["command"], args=ENTRY["args"])
#: McpSource's default per-call timeout (an entry's ``timeout_ms``), for ``bare_policies``.
DEFAULT_TIMEOUT_S = 60.0

ASYNC_PATHS = ("bare", "source_async", "bare_token", "bare_policies")
SYNC_PATHS = ("bare_sync", "source_sync")


@dataclass
class Path:
    """What one path measured, over every block it ran."""

    wall: list[float] = field(default_factory=list)
    #: Per repetition: p50 of the block, client CPU per call, server CPU per call (or None).
    p50: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    server_cpu: list[float | None] = field(default_factory=list)


Results = dict[str, Path]


def children() -> set[int]:
    """This process's child processes (Linux ``/proc``; empty elsewhere)."""
    me, out = os.getpid(), set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            out.add(int(name))
    return out


def server_cpu_s(pid: int | None) -> float | None:
    """CPU seconds the process's threads have run so far (nanosecond resolution), if
    readable. Every thread counts: the SDK's stdio server reads and writes through worker
    threads (about a sixth of its CPU), which ``/proc/<pid>/schedstat`` alone leaves out."""
    if pid is None:
        return None
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def new_child(before: set[int]) -> int | None:
    """The one child process started since ``before`` was taken, if exactly one."""
    started = children() - before
    return started.pop() if len(started) == 1 else None


def record(path: Path, wall: list[float], cpu: float, srv: tuple[float | None, float | None]):
    n = len(wall)
    path.wall += wall
    path.p50.append(statistics.median(wall))
    path.cpu.append(cpu / n)
    start, end = srv
    path.server_cpu.append(None if start is None or end is None else (end - start) / n)


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


def rotation(names: tuple[str, ...], rep: int) -> list[str]:
    turn = rep % len(names)
    return list(names[turn:] + names[:turn])


async def async_round(results: Results, per_block: int, reps: int, warmup: int) -> None:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        return None

    before = children()
    async with Client(PARAMS) as bare:
        bare_pid = new_child(before)
        before = children()
        async with McpSource([ENTRY], include_config=False) as source:
            await source.adiscover_tools()
            source_pid = new_child(before)

            async def with_policies() -> Any:
                with anyio.CancelScope(deadline=anyio.current_time() + DEFAULT_TIMEOUT_S):
                    return await bare.call_tool("echo", ARGS, progress_callback=on_progress)

            paths: dict[str, tuple[Callable[[], Awaitable[Any]], int | None]] = {
                "bare": (lambda: bare.call_tool("echo", ARGS), bare_pid),
                "source_async": (lambda: source.acall_tool("mcp_fx_echo", ARGS), source_pid),
                "bare_token": (
                    lambda: bare.call_tool("echo", ARGS, progress_callback=on_progress),
                    bare_pid,
                ),
                "bare_policies": (with_policies, bare_pid),
            }
            for call, _ in paths.values():
                await timed(call, warmup)
            for rep in range(reps):
                for name in rotation(ASYNC_PATHS, rep):
                    call, pid = paths[name]
                    srv, cpu = server_cpu_s(pid), time.process_time()
                    wall = await timed(call, per_block)
                    cpu = time.process_time() - cpu
                    record(results[name], wall, cpu, (srv, server_cpu_s(pid)))


def sync_round(results: Results, per_block: int, reps: int, warmup: int) -> None:
    """``source.call_tool`` from sync code, against a bare client living on the same private
    loop, driven once per call."""
    before = children()
    with McpSource([ENTRY], include_config=False) as source:
        source.discover_tools()
        source_pid = new_child(before)
        loop = source._rt.sync
        assert loop is not None
        box: dict[str, Any] = {}

        async def hold_bare() -> None:
            async with Client(PARAMS) as bare:
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

        before = children()
        loop.run(start)
        bare_pid = new_child(before)
        try:
            paths: dict[str, tuple[Callable[[], Any], int | None]] = {
                "bare_sync": (
                    lambda: loop.run(lambda: box["bare"].call_tool("echo", ARGS)),
                    bare_pid,
                ),
                "source_sync": (lambda: source.call_tool("mcp_fx_echo", ARGS), source_pid),
            }
            for call, _ in paths.values():
                timed_sync(call, warmup)
            for rep in range(reps):
                for name in rotation(SYNC_PATHS, rep):
                    call, pid = paths[name]
                    srv, cpu = server_cpu_s(pid), time.process_time()
                    wall = timed_sync(call, per_block)
                    cpu = time.process_time() - cpu
                    record(results[name], wall, cpu, (srv, server_cpu_s(pid)))
        finally:
            loop.run(stop)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table(title: str, results: Results, base: str) -> None:
    print(f"\n{title} (against {base})")
    print(
        f"{'path':<15} {'p50':>8} {'p90':>8} {'p50 ratio':>10} {'client CPU':>11}"
        f" {'CPU ratio':>10} {'server CPU':>11}  calls"
    )
    for name, path in results.items():
        ratio = ratio_of(path.p50, results[base].p50)
        cpu_ratio = ratio_of(path.cpu, results[base].cpu)
        srv = [s for s in path.server_cpu if s is not None]
        srv_text = f"{statistics.median(srv) * 1e6:8.0f} us" if srv else "       n/a"
        print(
            f"{name:<15} {statistics.median(path.wall) * 1e3:6.3f}ms "
            f"{quantile(path.wall, 0.9) * 1e3:6.3f}ms {statistics.median(ratio):10.3f}"
            f" {statistics.median(path.cpu) * 1e6:8.0f} us {statistics.median(cpu_ratio):10.3f}"
            f" {srv_text}  {len(path.wall)}"
        )


def ratio_of(values: list[float], base: list[float]) -> list[float]:
    """Per-repetition ratios (blocks of the same repetition and round are paired)."""
    return [v / b for v, b in zip(values, base, strict=True)]


def must_hold(label: str, path: Path, base: Path) -> bool:
    ratios = ratio_of(path.p50, base.p50)
    cpu = ratio_of(path.cpu, base.cpu)
    med = statistics.median(ratios)
    srv = [s / b for s, b in zip(path.server_cpu, base.server_cpu, strict=True) if s and b]
    srv_text = f"  server CPU ratio {statistics.median(srv):.3f}" if srv else ""
    print(
        f"{label:<40} p50 ratio {med:.3f}  range {min(ratios):.3f}-{max(ratios):.3f}"
        f"  IQR {quantile(ratios, 0.25):.3f}-{quantile(ratios, 0.75):.3f}"
        f"  (n={len(ratios)})  client CPU ratio {statistics.median(cpu):.3f}{srv_text}"
        f"  [{'ok' if med <= 1.05 else 'OVER'} <= 1.05]"
    )
    return med <= 1.05


def parts(n: int) -> None:
    """What each piece of McpSource's own per-call work costs, alone, in a tight loop
    (client CPU per call): the pieces that apply with every policy at its default."""
    from mcp import types

    from lemon_skills.mcp.output.results import tool_result
    from lemon_skills.mcp.output.spill import over_budget
    from lemon_skills.mcp.session.deadline import Deadline, Timekeeper
    from lemon_skills.mcp.session.errlog import StderrLog, StderrPipe
    from lemon_skills.telemetry import otel

    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="echo:ok")],
        structured_content={"result": "echo:ok"},
    )
    converted = tool_result(result, server="fx", tool="echo")

    def per_call(fn: Callable[[], Any]) -> float:
        started = time.process_time()
        for _ in range(n):
            fn()
        return (time.process_time() - started) / n * 1e6

    async def per_call_async(fn: Callable[[], Awaitable[Any]]) -> float:
        started = time.process_time()
        for _ in range(n):
            await fn()
        return (time.process_time() - started) / n * 1e6

    async def measure() -> dict[str, float]:
        from contextlib import AsyncExitStack

        deadline = Deadline(60.0, 600.0)

        async def nothing() -> None:
            return None

        async def under_deadline() -> None:
            with deadline.scope():
                await nothing()

        keeper = Timekeeper()

        async def kept() -> None:
            with keeper.watch(deadline):
                await nothing()
            keeper.release(deadline)

        async with AsyncExitStack() as stack, anyio.create_task_group() as tg:
            tg.start_soon(keeper.run)
            await anyio.lowlevel.checkpoint()
            pipe = StderrPipe(StderrLog())
            pipe.open(stack)
            reference = await per_call_async(nothing)
            costs = {
                "an await of a no-op coroutine (reference)": reference,
                "per-call deadline, a cancel scope with a timer": (
                    await per_call_async(under_deadline) - reference
                ),
                "per-call deadline, a plain scope the timekeeper watches (used)": (
                    await per_call_async(kept) - reference
                ),
                "liveness probe of a stdio server (stderr pipe poll)": per_call(pipe.gone),
            }
            tg.cancel_scope.cancel()
            return costs

    costs = anyio.run(measure)
    costs["result conversion (one text block)"] = per_call(
        lambda: tool_result(result, server="fx", tool="echo")
    )
    costs["result budget check"] = per_call(lambda: over_budget(converted, 25_000))

    def observed() -> None:
        with otel.span("lemon.mcp.call", {"lemon.server": "fx"}) as current:
            otel.set_attributes(current, {"error": False})
        otel.record("lemon.mcp.call.duration", 0.001, {"lemon.server": "fx"})

    costs["OpenTelemetry span and metric, nothing configured"] = per_call(observed)
    print(f"\nparts: client CPU per call, each alone ({n} iterations)")
    for label, us in costs.items():
        print(f"  {label:<64} {us:6.2f} us")


def load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per path per round")
    parser.add_argument("--rounds", type=int, default=3, help="fresh sessions per round")
    parser.add_argument("--reps", type=int, default=10, help="interleaved blocks per round")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument(
        "--parts", type=int, default=20000, help="iterations per piece in the parts table"
    )
    opts = parser.parse_args()
    per_block = max(1, opts.calls // opts.reps)
    print(f"load average before: {load()}   cores: {os.cpu_count()}")
    print(f"{opts.rounds} rounds x {opts.reps} repetitions x {per_block} calls per path")
    wall, cpu = time.perf_counter(), time.process_time()
    async_results: Results = {name: Path() for name in ASYNC_PATHS}
    sync_results: Results = {name: Path() for name in SYNC_PATHS}
    for _ in range(opts.rounds):
        anyio.run(async_round, async_results, per_block, opts.reps, opts.warmup)
        sync_round(sync_results, per_block, opts.reps, opts.warmup)
    table("async", async_results, "bare")
    table("sync", sync_results, "bare_sync")
    print(
        f"\nrun: {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s "
        f"client CPU; load average after: {load()}"
    )
    print("\nmust hold (every policy at its default; median over repetitions):")
    ok = must_hold("async acall_tool / bare SDK session", *pick(async_results, "source_async"))
    ok &= must_hold("sync call_tool / bare SDK driven per call", *pick(sync_results, "source_sync"))
    print("\ndiagnostic (what the default policies cost on the bare SDK session itself):")
    must_hold("bare + progress token / bare", *pick(async_results, "bare_token"))
    must_hold("bare + token + deadline scope / bare", *pick(async_results, "bare_policies"))
    must_hold(
        "source_async / bare + token + deadline",
        async_results["source_async"],
        async_results["bare_policies"],
    )
    parts(opts.parts)
    raise SystemExit(0 if ok else 1)


def pick(results: Results, name: str) -> tuple[Path, Path]:
    base = "bare" if name in ASYNC_PATHS else "bare_sync"
    return results[name], results[base]


if __name__ == "__main__":
    main()
