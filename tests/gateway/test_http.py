"""The gateway over Streamable HTTP: tokens, Origin and body checks, clients kept apart, and
SIGTERM draining the calls in flight before every upstream server stops."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.gateway.conftest import shifty, text
from tests.helpers.mcp import SERVERS, rich, smoke


@contextmanager
def http_gateway(cwd: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lemon_skills", "mcp", "gateway", "--cwd", str(cwd), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"(http://\S+/mcp)", line)
        assert m, f"the gateway did not start: {line}{proc.stderr.read() if proc.poll() else ''}"
        yield proc, m.group(1)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


@asynccontextmanager
async def client(url: str, token: str, **kw: Any) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, **kw) as session,
    ):
        await session.initialize()
        yield session


def test_tokens_origin_and_body_are_checked(project: Path, servers: Any, tmp_path: Path) -> None:
    servers(smoke("fx"))
    tokens = tmp_path / "tokens"
    tokens.write_text("s3cret\n")
    with http_gateway(project, "--http", "127.0.0.1:0", "--token-file", str(tokens)) as (_, url):
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        denied = httpx.post(url, json=ping, timeout=10)
        assert denied.status_code == 401 and "Bearer" in denied.headers["www-authenticate"]
        ok = {"Authorization": "Bearer s3cret"}
        foreign = httpx.post(url, json=ping, headers=ok | {"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        huge = httpx.post(url, content=b"x" * (5 * 1024 * 1024), headers=ok, timeout=30)
        assert huge.status_code == 413

        async def main() -> None:
            async with client(url, "s3cret") as s:
                assert text(await s.call_tool("mcp_fx_echo", {"message": "h"})) == "echo:h"

        anyio.run(main)


@pytest.mark.slow
def test_one_clients_found_tools_and_approvals_never_reach_another(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    servers(smoke("fx"), shifty("sh", tmp_path / "sh", approve="always"))
    tokens = tmp_path / "tokens"
    tokens.write_text("alice\nbob\n")

    async def always(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"decision": "always"})

    async def deny(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"decision": "deny"})

    async def main(url: str) -> None:
        async with (
            client(url, "alice", elicitation_callback=always) as a,
            client(url, "bob", elicitation_callback=deny) as b,
        ):
            await a.call_tool("tool_search", {"query": "echo a message back"})
            mine = {t.name for t in (await a.list_tools()).tools}
            theirs = {t.name for t in (await b.list_tools()).tools}
            assert "mcp_fx_echo" in mine and "mcp_fx_echo" not in theirs
            assert text(await a.call_tool("mcp_sh_counted", {"n": 1})) == "1"
            refused = await b.call_tool("mcp_sh_counted", {"n": 1})
            assert refused.is_error and "was not run" in text(refused)

    args = ("--http", "127.0.0.1:0", "--token-file", str(tokens), "--tools", "search")
    with http_gateway(project, *args) as (_, url):
        anyio.run(main, url)


@pytest.mark.slow
def test_sigterm_lets_the_call_in_flight_finish_and_stops_every_upstream(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    state = tmp_path / "fl"
    state.mkdir()
    entry = {"command": sys.executable, "args": [str(SERVERS / "flaky.py")]}
    servers({"name": "fl", **entry, "env": {"FLAKY_DIR": str(state)}})

    upstream: list[int] = []

    async def main(url: str, proc: subprocess.Popen[str]) -> str:
        async with client(url, "t") as s:
            await s.call_tool("mcp_fl_count", {})
            upstream.extend(_children(proc.pid))
            async with anyio.create_task_group() as tg:

                async def stop() -> None:
                    await anyio.sleep(0.5)
                    proc.send_signal(signal.SIGTERM)

                tg.start_soon(stop)
                out = await s.call_tool("mcp_fl_long", {"seconds": 1.5, "every": 0.5})
            return text(out)

    tokens = tmp_path / "tokens"
    tokens.write_text("t\n")
    with http_gateway(project, "--http", "127.0.0.1:0", "--token-file", str(tokens)) as (p, url):
        assert anyio.run(main, url, p) == "done"
        assert p.wait(20) == 0
    assert upstream and not any(_alive(pid) for pid in upstream)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()]


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


@pytest.mark.slow
def test_a_server_with_share_false_gets_one_process_per_client(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    servers(rich("common"), rich("own", share=False))
    tokens = tmp_path / "tokens"
    tokens.write_text("alice\nbob\n")

    async def pids(url: str) -> dict[str, set[str]]:
        seen: dict[str, set[str]] = {"common": set(), "own": set()}
        async with client(url, "alice") as a, client(url, "bob") as b:
            for s in (a, b, a):
                for server in seen:
                    seen[server].add(text(await s.call_tool(f"mcp_{server}_pid", {})))
            names = {t.name for t in (await b.list_tools()).tools}
            assert {"mcp_own_echo", "mcp_common_echo"} <= names
        return seen

    with http_gateway(project, "--http", "127.0.0.1:0", "--token-file", str(tokens)) as (_, url):
        seen = anyio.run(pids, url)
    assert len(seen["common"]) == 1  # one connection for every client
    assert len(seen["own"]) == 2  # one per client, each kept across its calls


@pytest.mark.slow
def test_a_2026_clients_held_call_takes_answers_from_that_client_only(
    project: Path, servers: Any, tmp_path: Path
) -> None:
    from mcp import Client
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    servers(shifty("sh", tmp_path / "sh"))
    tokens = tmp_path / "tokens"
    tokens.write_text("alice\nbob\n")

    async def by_hand(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("the raw rounds are answered by hand")

    @asynccontextmanager
    async def modern(url: str, token: str) -> AsyncIterator[Any]:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, elicitation_callback=by_hand) as c:
                assert c.protocol_version in MODERN_PROTOCOL_VERSIONS
                yield c

    async def main(url: str) -> list[Any]:
        async with modern(url, "alice") as a, modern(url, "bob") as b:
            asked = await a.session.call_tool("mcp_sh_confirm", {}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            yes = {"upstream": types.ElicitResult(action="accept", content={"ok": True})}
            kw: dict[str, Any] = {"input_responses": yes, "request_state": asked.request_state}
            kw["allow_input_required"] = True
            foreign = await b.session.call_tool("mcp_sh_confirm", {}, **kw)
            mine = await a.session.call_tool("mcp_sh_confirm", {}, **kw)
            return [foreign, mine]

    args = ("--http", "127.0.0.1:0", "--token-file", str(tokens), "--tools", "all")
    with http_gateway(project, *args) as (_, url):
        foreign, mine = anyio.run(main, url)
    assert foreign.is_error and "no call waits" in text(foreign)
    assert text(mine) == "accept:True"
