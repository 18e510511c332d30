"""The gateway's cost: per-call latency against a direct connection and fastmcp's proxy, the
listing and tool search over the 1,073-tool bench corpus, and memory with many clients.

    python benchmarks/gateway_call.py [--calls 300] [--rounds 5] [--skip calls,search,rss]

``calls``: three SDK ``ClientSession`` s over stdio, in one run, call the same echo tool of
the bundled fixture server (one server process each): ``direct`` (the fixture itself),
``gateway`` (``lemon mcp gateway --tools all`` in front of it) and ``fastmcp`` (fastmcp's
``create_proxy`` in front of it; ``pip install 'lemon-skills[integration]'``). Each round
times a block of ``calls`` calls on every path, in an order that rotates between rounds;
the p50 of each path and the ratios gateway/direct and fastmcp/direct are given per round,
then as the median over the rounds. Target: gateway <= 2.2x direct and below fastmcp.

``search``: the gateway in ``search`` mode in front of the 56 recorded servers of the tool
bench (1,073 tools; ``benchmarks/_tool_corpus_server.py``): warm p50 of ``tools/list`` and of
``tool_search`` over the bench's queries, end to end through the client. Target: < 50 ms.

``rss``: the gateway over HTTP with 10 upstream fixture servers and 50 client sessions that
each listed and called a tool; the gateway process's RSS (its servers are their own
processes). Target: < 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import corpus
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SMOKE = ["-m", "lemon_skills.selftest.fixtures.server"]
CORPUS_SERVER = Path(__file__).resolve().parent / "_tool_corpus_server.py"
PROXY = """
import sys
from fastmcp.server import create_proxy
create_proxy({"mcpServers": {"fx": {"command": sys.executable, "args": %r}}}).run()
"""


def _env(agent_dir: Path, servers: dict[str, Any]) -> dict[str, str]:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEMON_")}
    return env | {"LEMON_AGENT_DIR": str(agent_dir), "HOME": str(agent_dir.parent)}


@asynccontextmanager
async def session(command: list[str], env: dict[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        yield s


def _gateway(cwd: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "lemon_skills", "mcp", "gateway", "--cwd", str(cwd), *args]


async def _block(call: Callable[[], Awaitable[Any]], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


async def calls(work: Path, n: int, rounds: int) -> None:
    env = _env(work / "agent", {"fx": {"command": sys.executable, "args": SMOKE}})
    proxy = work / "proxy.py"
    proxy.write_text(PROXY % (SMOKE,), encoding="utf-8")
    paths = {
        "direct": [sys.executable, *SMOKE],
        "gateway": _gateway(work, "--tools", "all"),
        "fastmcp": [sys.executable, str(proxy)],
    }
    async with AsyncExitStack() as stack:
        sessions = {k: await stack.enter_async_context(session(c, env)) for k, c in paths.items()}
        tools = {k: [t.name for t in (await s.list_tools()).tools] for k, s in sessions.items()}
        name = {k: next(t for t in v if t.endswith("echo")) for k, v in tools.items()}

        def caller(k: str) -> Callable[[], Awaitable[Any]]:
            return lambda: sessions[k].call_tool(name[k], {"message": "hi"})

        for k in paths:  # warm-up
            await _block(caller(k), 50)
        trees = _trees()
        order = list(paths)
        rows: list[dict[str, float]] = []
        cpu = dict.fromkeys(paths, 0.0)
        for r in range(rounds):
            p50 = {}
            for k in order[r % 3 :] + order[: r % 3]:
                before = _cpu(trees[k])
                p50[k] = await _block(caller(k), n)
                cpu[k] += _cpu(trees[k]) - before
            rows.append(p50)
            print(
                f"round {r + 1}: p50 direct {p50['direct']:.3f} ms, gateway "
                f"{p50['gateway']:.3f} ms, fastmcp {p50['fastmcp']:.3f} ms; gateway/direct "
                f"{p50['gateway'] / p50['direct']:.2f}x, fastmcp/direct "
                f"{p50['fastmcp'] / p50['direct']:.2f}x"
            )
    med = {k: statistics.median(r[k] for r in rows) for k in paths}
    g = statistics.median(r["gateway"] / r["direct"] for r in rows)
    f = statistics.median(r["fastmcp"] / r["direct"] for r in rows)
    print(
        f"calls ({rounds} rounds x {n}): p50 direct {med['direct']:.3f} ms, gateway "
        f"{med['gateway']:.3f} ms, fastmcp proxy {med['fastmcp']:.3f} ms; median ratio "
        f"gateway/direct {g:.2f}x (target <= 2.2x), fastmcp/direct {f:.2f}x"
    )
    per = {k: cpu[k] / (rounds * n) * 1e6 for k in paths}
    print(
        f"server-side CPU per call (every process of the path): direct {per['direct']:.0f} us, "
        f"gateway {per['gateway']:.0f} us ({per['gateway'] / per['direct']:.2f}x), fastmcp "
        f"{per['fastmcp']:.0f} us ({per['fastmcp'] / per['direct']:.2f}x)"
    )


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _trees() -> dict[str, list[int]]:
    """The processes of each path: the first-level child and its children."""
    trees: dict[str, list[int]] = {}
    for pid in _children(os.getpid()):
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        kind = "gateway" if " gateway " in cmd else "fastmcp" if "proxy.py" in cmd else "direct"
        trees[kind] = [pid, *_children(pid)]
    return trees


def _cpu(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids``."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


async def search(work: Path) -> None:
    bench = corpus.bench_root() / "tools"
    tools_file = bench / "tools.jsonl"
    servers = sorted({json.loads(line)["server"] for line in tools_file.open(encoding="utf-8")})
    entries = {
        re.sub(r"[^A-Za-z0-9_-]", "_", s): {
            "command": sys.executable,
            "args": [str(CORPUS_SERVER), "--tools", str(tools_file), "--server", s],
        }
        for s in servers
    }
    queries = [
        json.loads(line)["query"] for line in (bench / "queries_dev.jsonl").open(encoding="utf-8")
    ]
    env = _env(work / "agent-search", entries)
    async with session(_gateway(work, "--tools", "search"), env) as s:
        t0 = time.perf_counter()
        await s.list_tools()
        first = time.perf_counter() - t0
        await s.call_tool("tool_search", {"query": queries[0]})  # builds the index once
        listed = [await _block(s.list_tools, 1) for _ in range(50)]
        found = []
        for q in queries:
            t0 = time.perf_counter()
            await s.call_tool("tool_search", {"query": q})
            found.append((time.perf_counter() - t0) * 1000)
        # tool_search added tools to this client's list: the list it now gets is bigger.
        grown = len((await s.list_tools()).tools)
    async with session(_gateway(work, "--tools", "all"), env) as s:
        every = len((await s.list_tools()).tools)
        listed_all = [await _block(s.list_tools, 1) for _ in range(20)]
    raw_all = _raw_lists(_gateway(work, "--tools", "all"), env, 20)
    print(
        f"search mode over {len(servers)} servers / 1,073 tools: first tools/list (starting every "
        f"server) {first:.1f} s; warm tools/list p50 {statistics.median(listed):.2f} ms; "
        f"tool_search p50 {statistics.median(found):.2f} ms, p95 "
        f"{sorted(found)[int(len(found) * 0.95)]:.2f} ms over {len(found)} queries "
        f"(target < 50 ms); the client's list after them: {grown} tools; with --tools all, "
        f"tools/list of {every} tools p50 {statistics.median(listed_all):.2f} ms through the "
        f"SDK client (its own validation included), {statistics.median(raw_all):.2f} ms to the "
        "last byte of the answer on the wire"
    )


def _raw_lists(command: list[str], env: dict[str, str], n: int) -> list[float]:
    """``tools/list`` timed on the wire (JSON lines on the pipes, no client library)."""
    import subprocess

    proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(i: int, method: str, params: dict[str, Any] | None = None) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            message["params"] = params
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        return proc.stdout.readline()  # type: ignore[union-attr]

    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"},
    }
    ask(0, "initialize", init)
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    ask(1, "tools/list")
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        ask(i + 2, "tools/list")
        times.append((time.perf_counter() - t0) * 1000)
    proc.stdin.close()
    proc.wait(30)
    return times


async def rss(work: Path, upstreams: int, clients: int) -> None:
    import subprocess

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    servers = {f"fx{i}": {"command": sys.executable, "args": SMOKE} for i in range(upstreams)}
    env = _env(work / "agent-rss", servers)
    tokens = work / "tokens"
    tokens.write_text("bench\n", encoding="utf-8")
    args = _gateway(work, "--tools", "all", "--http", "127.0.0.1:0", "--token-file", str(tokens))
    proc = subprocess.Popen(args, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = re.search(r"(http://\S+/mcp)", proc.stderr.readline())
        assert url, "the gateway did not start"
        headers = {"Authorization": "Bearer bench"}
        async with AsyncExitStack() as stack:
            for i in range(clients):
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=60)
                )
                r, w = await stack.enter_async_context(
                    streamable_http_client(url.group(1), http_client=http)
                )
                s = await stack.enter_async_context(ClientSession(r, w))
                await s.initialize()
                await s.list_tools()
                await s.call_tool(f"mcp_fx{i % upstreams}_echo", {"message": "m"})
            status = Path(f"/proc/{proc.pid}/status").read_text()
            kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
            hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        print(
            f"rss: gateway with {upstreams} upstream servers and {clients} HTTP sessions: "
            f"{kb / 1024:.0f} MB (peak {hwm / 1024:.0f} MB; target < 300 MB)"
        )
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip", default="", help="comma-separated: calls, search, rss")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "calls" not in skip:
            anyio.run(calls, work, args.calls, args.rounds)
        if "search" not in skip:
            anyio.run(search, work)
        if "rss" not in skip:
            anyio.run(rss, work, 10, 50)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
