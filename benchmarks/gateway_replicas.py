"""Two gateway replicas on one PostgreSQL database under 200 concurrent HTTP sessions.

    python benchmarks/gateway_replicas.py [--url postgresql://...] [--sessions 200] [--calls 10]

Without ``--url`` a throwaway server is started (``initdb`` + ``pg_ctl`` in a temporary
directory, as the tests do) and removed afterwards.

Two ``lemon mcp gateway --http 127.0.0.1:0`` processes share the database and one secret
(``--state-secret-file``), each in front of the bundled echo fixture. All sessions run at once,
each making ``--calls`` calls of ``mcp_fx_echo``; every call's result is checked.

* ``handshake``: SDK ``ClientSession`` s, session i on replica i % 2 (sticky, as a load
  balancer routing by ``Mcp-Session-Id`` does).
* ``stateless``: 2026-07-28 clients, call j of a session on replica j % 2 (round robin per
  request, as a load balancer with no affinity does).
* anchor: the same ``handshake`` load on one gateway alone.

Reported: errors (target 0), calls per second, and p50/p95 latency per run, and the p50 ratio
replicas / one gateway.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

FIXTURE = ["-m", "lemon_skills.selftest.fixtures.server"]
TOKEN = "bench"


@contextmanager
def gateway(work: Path, env: dict[str, str]) -> Iterator[str]:
    tokens, secret = work / "tokens", work / "secret"
    args = [
        "--http",
        "127.0.0.1:0",
        "--token-file",
        str(tokens),
        "--state-secret-file",
        str(secret),
    ]
    command = [sys.executable, "-m", "lemon_skills", "mcp", "gateway", "--cwd", str(work), *args]
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        found = re.search(r"(http://\S+/mcp)", proc.stderr.readline())
        assert found, "the gateway did not start"
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(30)


async def handshake(urls: list[str], sessions: int, calls: int) -> tuple[list[float], list[str]]:
    times: list[float] = []
    errors: list[str] = []

    async def one(i: int, ready: anyio.Event, go: anyio.Event, done: list[int]) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        try:
            async with AsyncExitStack() as stack:
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=120)
                )
                r, w = await stack.enter_async_context(
                    streamable_http_client(urls[i % len(urls)], http_client=http)
                )
                s = await stack.enter_async_context(ClientSession(r, w))
                await s.initialize()
                done.append(i)
                if len(done) == sessions:
                    ready.set()
                await go.wait()
                for j in range(calls):
                    await timed_call(s.call_tool, f"{i}-{j}", times, errors)
        except Exception as exc:  # counted, not raised: the run reports every failure
            errors.append(f"session {i}: {exc!r}")
            done.append(i)
            if len(done) == sessions:
                ready.set()

    ready, go, done = anyio.Event(), anyio.Event(), []
    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(one, i, ready, go, done)
        await ready.wait()
        go.set()
    return times, errors


async def stateless(urls: list[str], sessions: int, calls: int) -> tuple[list[float], list[str]]:
    times: list[float] = []
    errors: list[str] = []

    async def one(i: int) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        try:
            async with AsyncExitStack() as stack:
                clients = []
                for url in urls:
                    http = await stack.enter_async_context(
                        httpx2.AsyncClient(headers=headers, timeout=120)
                    )
                    transport = streamable_http_client(url, http_client=http)
                    clients.append(await stack.enter_async_context(Client(transport)))
                for j in range(calls):
                    c = clients[(i + j) % len(clients)]
                    await timed_call(c.call_tool, f"{i}-{j}", times, errors)
        except Exception as exc:
            errors.append(f"session {i}: {exc!r}")

    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(one, i)
    return times, errors


async def timed_call(call: Any, message: str, times: list[float], errors: list[str]) -> None:
    t0 = time.perf_counter()
    try:
        result = await call("mcp_fx_echo", {"message": message})
    except Exception as exc:
        errors.append(repr(exc))
        return
    times.append((time.perf_counter() - t0) * 1000)
    got = result.content[0].text if result.content else ""
    if result.is_error or got != f"echo:{message}":
        errors.append(f"wrong answer {got!r}")


def report(label: str, times: list[float], errors: list[str], wall: float) -> float:
    p50 = statistics.median(times) if times else float("nan")
    p95 = statistics.quantiles(times, n=20)[18] if len(times) > 1 else float("nan")
    print(
        f"{label:<34} calls {len(times):>5}  errors {len(errors):>3}  "
        f"{len(times) / wall:7.0f}/s  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
    )
    for e in errors[:5]:
        print(f"    {e}")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=None, help="a PostgreSQL database to use")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--calls", type=int, default=10)
    opts = parser.parse_args()
    with ExitStack() as stack:
        url = opts.url
        if url is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.helpers import postgres

            server = postgres.start()
            stack.callback(server.stop)
            url = server.url
        work = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        agent = work / "agent"
        agent.mkdir()
        servers = {"fx": {"command": sys.executable, "args": FIXTURE}}
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        (work / "tokens").write_text(TOKEN + "\n", encoding="utf-8")
        (work / "secret").write_text(os.urandom(32).hex(), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LEMON_")}
        env |= {"LEMON_AGENT_DIR": str(agent), "HOME": str(work), "LEMON_DATABASE_URL": url}
        n, calls = opts.sessions, opts.calls
        print(f"{n} sessions x {calls} calls   load: {os.getloadavg()[0]:.2f}")
        total_errors = 0
        p50s: dict[str, float] = {}
        with gateway(work, env) as a, gateway(work, env) as b:
            for label, run in (
                ("two replicas, handshake (sticky)", handshake),
                ("two replicas, stateless (any)", stateless),
            ):
                t0 = time.perf_counter()
                times, errors = anyio.run(run, [a, b], n, calls)
                p50s[label] = report(label, times, errors, time.perf_counter() - t0)
                total_errors += len(errors)
        with gateway(work, env) as one:
            t0 = time.perf_counter()
            times, errors = anyio.run(handshake, [one], n, calls)
            anchor = report(
                "one gateway, handshake (anchor)", times, errors, time.perf_counter() - t0
            )
        ratio = p50s["two replicas, handshake (sticky)"] / anchor
        print(f"p50 two replicas / one gateway: {ratio:.2f}x   errors: {total_errors} (target 0)")


if __name__ == "__main__":
    main()
