"""Two ``lemon mcp gateway --http`` replicas on one PostgreSQL database with one secret behave
as one gateway: an approval asked through one is decided anywhere and released through the
other, a pin held anywhere is held by both (and their clients hear of it), a stateless
2026-07-28 client may land on either, and a replica killed mid-call loses that caller's call
without any replica running it again."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from tests.gateway.conftest import shifty, text
from tests.gateway.test_http import client, http_gateway
from tests.tools.serve.test_http_exposure import INIT, MCP_HEADERS

pytestmark = pytest.mark.slow

TOKEN = "team-token"


@contextmanager
def replicas(
    project: Path, tmp_path: Path, n: int = 2
) -> Iterator[list[tuple[subprocess.Popen[str], str]]]:
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    secret = tmp_path / "secret"
    secret.write_text("s" * 64 + "\n")
    args = ("--http", "127.0.0.1:0", "--token-file", str(tokens))
    with ExitStack() as stack:
        yield [
            stack.enter_context(http_gateway(project, *args, "--state-secret-file", str(secret)))
            for _ in range(n)
        ]


@asynccontextmanager
async def stateless(url: str) -> AsyncIterator[Client]:
    """A 2026-07-28 client: no session, every request stands alone."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as c,
    ):
        assert c.protocol_version in MODERN_PROTOCOL_VERSIONS
        yield c


def lemon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lemon_skills", *args], capture_output=True, text=True, timeout=60
    )


def runs(state: Path, tool: str) -> int:
    path = state / f"{tool}.runs"
    return int(path.read_text()) if path.exists() else 0


def test_an_approval_asked_through_one_replica_releases_the_call_on_the_other(
    project: Path, servers: Any, tmp_path: Path, pg_url: str
) -> None:
    state = tmp_path / "sh"
    servers(shifty("sh", state, approve="always"))

    async def main(a: str, b: str) -> None:
        async with stateless(a) as on_a, stateless(b) as on_b:
            asked = await on_a.call_tool("mcp_sh_counted", {"n": 1})
            assert asked.is_error and "approval" in text(asked)
            found = re.search(r"approval (\S+) is pending", text(asked))
            assert found, text(asked)
            listed = lemon("approvals", "list", "--json")
            assert found.group(1) in listed.stdout, listed.stderr
            decided = lemon("approvals", "approve", found.group(1))
            assert decided.returncode == 0, decided.stderr
            assert runs(state, "counted") == 0
            released = await on_b.call_tool("mcp_sh_counted", {"n": 1})
            assert not released.is_error and text(released) == "1"
            # An approval runs one call, on whichever replica the retry lands.
            again = await on_a.call_tool("mcp_sh_counted", {"n": 1})
            assert again.is_error and "approval" in text(again)
            assert runs(state, "counted") == 1
            # Every replica opens requestState under the shared key, and refuses a forgery.
            with pytest.raises(Exception, match="Invalid or expired requestState"):
                await on_b.call_tool("mcp_sh_counted", {"n": 1}, request_state="v1.forged")

    with replicas(project, tmp_path) as [(_, a), (_, b)]:
        anyio.run(main, a, b)


def test_a_handshake_session_lives_on_the_replica_that_began_it(
    project: Path, servers: Any, tmp_path: Path, pg_url: str
) -> None:
    servers(shifty("sh", tmp_path / "sh"))
    auth = MCP_HEADERS | {"Authorization": f"Bearer {TOKEN}"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    with replicas(project, tmp_path) as [(_, a), (_, b)]:
        began = httpx.post(a, json=INIT, headers=auth, timeout=30)
        sid = began.headers["mcp-session-id"]
        session = auth | {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
        assert httpx.post(a, json=ping, headers=session, timeout=30).status_code == 200
        # Another replica does not know it: the load balancer must route by this header.
        assert httpx.post(b, json=ping, headers=session, timeout=30).status_code == 404


def test_a_pin_held_anywhere_is_held_by_both_and_their_clients_hear_of_it(
    project: Path, servers: Any, tmp_path: Path, pg_url: str
) -> None:
    from lemon_skills.state.pins import pin_store

    state = tmp_path / "sh"
    servers(shifty("sh", state))
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root if hasattr(message, "root") else message, types.ToolListChangedNotification
        ):
            heard.set()

    async def main(a: str, b: str) -> None:
        async with stateless(a) as on_a, client(b, TOKEN, message_handler=on_message) as on_b:
            assert text(await on_a.call_tool("mcp_sh_counted", {"n": 1})) == "1"
            assert text(await on_b.call_tool("mcp_sh_counted", {"n": 1})) == "2"
            store = pin_store()
            pins, traits = store.read("sh")
            assert "counted" in pins
            await anyio.to_thread.run_sync(store.hold, "sh", ["counted"])
            with anyio.fail_after(10):
                await heard.wait()
            for replica in (on_a, on_b):
                held = await replica.call_tool("mcp_sh_counted", {"n": 1})
                assert held.is_error and "approve-changes" in text(held), text(held)
            await anyio.to_thread.run_sync(store.replace, "sh", pins, traits)
            with anyio.fail_after(10):
                while (await on_a.call_tool("mcp_sh_counted", {"n": 1})).is_error:
                    await anyio.sleep(0.2)
            assert text(await on_b.call_tool("mcp_sh_counted", {"n": 1})) == "4"

    with replicas(project, tmp_path) as [(_, a), (_, b)]:
        anyio.run(main, a, b)


def test_a_replica_killed_mid_call_fails_that_call_only_and_nobody_runs_it_again(
    project: Path, servers: Any, tmp_path: Path, pg_url: str
) -> None:
    state = tmp_path / "sh"
    servers(shifty("sh", state))

    async def main(procs: list[tuple[subprocess.Popen[str], str]]) -> None:
        (victim, a), (_, b) = procs
        failed: list[BaseException | types.CallToolResult] = []

        async def doomed() -> None:
            try:
                async with stateless(a) as on_a:
                    failed.append(await on_a.call_tool("mcp_sh_slow", {"seconds": 3}))
            except Exception as exc:
                failed.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(doomed)
            with anyio.fail_after(20):
                while runs(state, "slow") == 0:
                    await anyio.sleep(0.05)
            victim.send_signal(signal.SIGKILL)
        assert failed and (not isinstance(failed[0], types.CallToolResult) or failed[0].is_error)
        async with stateless(b) as on_b:
            assert text(await on_b.call_tool("mcp_sh_counted", {"n": 1})) == "1"
            await anyio.sleep(4)  # longer than the killed call would have taken
        assert runs(state, "slow") == 1

    with replicas(project, tmp_path) as procs:
        anyio.run(main, procs)
