"""What the shared state adds to a tools/call: PostgreSQL over loopback against the embedded files.

    python benchmarks/state_lookup.py [--url postgresql://...] [--calls 2000] [--reps 10]

Without ``--url`` a throwaway server is started (``initdb`` + ``pg_ctl`` in a temporary
directory, as the tests do) and removed afterwards.

Three measurements; within each repetition the backends take turns call by call (the order
flipping every call), so machine noise hits both alike:

* ``lookups``: exactly the state work a tools/call does before it reaches the server: which
  backend is configured, and the pins' generation for the server (read once with a prepared,
  indexed SELECT on a pooled connection, then kept in memory until a NOTIFY announces a change;
  the embedded files need none: their pins change only through this process). The approvals
  policy needs no lookup for a tool that does not ask for one.
* ``lookups after a change``: the same with the in-memory generation dropped before every
  call, as after a change announced by another process: one round trip to the database.
* ``call``: ``McpSource.call_tool`` end to end against the bundled echo fixture over stdio
  (its own process), with every policy at its default, once per backend.

Reported: p50 and p90 per backend, and the p50 difference (PostgreSQL - embedded) per
repetition as a median with its range. Target: the difference at most 1 ms for both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import corpus  # noqa: F401  (its import keeps the run's pins out of the user's agent dir)
from mcp_call_overhead import timed_sync as timed

from lemon_skills import context, state
from lemon_skills.mcp.catalog import pinning
from lemon_skills.mcp.source import McpSource
from lemon_skills.state import pins

ENTRY = {
    "name": "fx",
    "command": sys.executable,
    "args": ["-m", "lemon_skills.selftest.fixtures.server"],
}
ARGS = {"message": "ok"}
BACKENDS = ("embedded", "postgresql")


def lookups() -> None:
    """The state lookups of one tools/call (see ``CatalogViews.invoke``)."""
    if state.database() is not None:
        pinning.generation("fx")


def cold_lookups() -> None:
    """The same after a change was announced: the generation is read from the database."""
    db = state.database()
    if db is not None:
        db.watched(pins.CHANNEL).clear()
        pinning.generation("fx")


def use(backend: str, url: str) -> None:
    if backend == "postgresql":
        os.environ["LEMON_DATABASE_URL"] = url
    else:
        os.environ.pop("LEMON_DATABASE_URL", None)


def measure(
    name: str, calls: dict[str, Callable[[], Any]], url: str, per_block: int, reps: int
) -> None:
    walls: dict[str, list[float]] = {b: [] for b in BACKENDS}
    diffs: list[float] = []
    for backend in BACKENDS:  # warm up: pool open, statements prepared, caches filled
        use(backend, url)
        timed(calls[backend], max(20, per_block // 10))
    for _ in range(reps):
        block: dict[str, list[float]] = {b: [] for b in BACKENDS}
        for i in range(per_block):
            for backend in BACKENDS if i % 2 == 0 else BACKENDS[::-1]:
                use(backend, url)
                block[backend] += timed(calls[backend], 1)
        for backend in BACKENDS:
            walls[backend] += block[backend]
        diffs.append(statistics.median(block["postgresql"]) - statistics.median(block["embedded"]))
    print(f"\n{name}: {per_block * reps} calls per backend")
    print(f"  {'backend':12} {'p50 ms':>8} {'p90 ms':>8}")
    for backend in BACKENDS:
        q = statistics.quantiles(walls[backend], n=10)
        print(f"  {backend:12} {statistics.median(walls[backend]) * 1e3:8.3f} {q[8] * 1e3:8.3f}")
    med = statistics.median(diffs) * 1e3
    lo, hi = min(diffs) * 1e3, max(diffs) * 1e3
    verdict = "ok" if med <= 1.0 else "OVER"
    print(f"  added p50 (postgresql - embedded): {med:.3f} ms [{lo:.3f} .. {hi:.3f}]  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=None, help="a PostgreSQL database to use")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=10)
    opts = parser.parse_args()
    server = None
    url = opts.url
    if url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.helpers import postgres

        server = postgres.start()
        url = server.url
    state.database  # noqa: B018  (imported before timing)
    try:
        use("postgresql", url)
        pinning.approve("fx", [])  # the schema exists before the first timed block
        per_block = max(1, opts.calls // opts.reps)
        print(f"database: {state.describe(url)}   load: {os.getloadavg()[0]:.2f}")
        measure("lookups", dict.fromkeys(BACKENDS, lookups), url, per_block, opts.reps)
        cold = dict.fromkeys(BACKENDS, cold_lookups)
        measure("lookups after a change (one round trip)", cold, url, per_block, opts.reps)
        with McpSource([ENTRY], include_config=False) as source:
            for backend in BACKENDS:
                use(backend, url)
                source.discover_tools()

            def call() -> Any:
                return source.call_tool("mcp_fx_echo", ARGS)

            calls = dict.fromkeys(BACKENDS, call)
            measure("call", calls, url, max(1, per_block // 4), opts.reps)
    finally:
        context.reset()
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
