"""``lemon mcp serve --http`` as a network client, a web page and a DNS-rebinding attack meet it:
the real CLI in a subprocess, real HTTP on loopback, the SDK's own client for the happy path."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import anyio.from_thread
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from lemon_skills.tools.serve.guard import Exposure, Grant
from lemon_skills.tools.serve.server import Options
from lemon_skills.tools.serve.web import serve_http
from tests.helpers.skills import write_skill

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def lemon(*args: str) -> list[str]:
    return [sys.executable, "-m", "lemon_skills", "mcp", "serve", *args]


@contextmanager
def serving(*args: str, cwd: Path) -> Iterator[str]:
    """``lemon mcp serve --http ...`` running; yields the URL it printed once listening."""
    proc = subprocess.Popen(
        lemon(*args, "--cwd", str(cwd)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("serving skills on http://"), (line, proc.stderr)
        yield line.split()[3].rstrip(",")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        # SIGTERM is a graceful stop: exit 0, nothing on stderr.
        assert (proc.returncode, err) == (0, ""), err


def post(url: str, headers: dict[str, str], body: bytes | None = None) -> httpx2.Response:
    data = json.dumps(INIT).encode() if body is None else body
    return httpx2.post(url, content=data, headers={**MCP_HEADERS, **headers}, timeout=20)


def skills(project_skills: Path) -> None:
    demo = write_skill(project_skills, "demo", description="Deploy the demo service.")
    (demo / ".env").write_text("API_KEY=hunter2\n")
    (demo / "guide.md").write_text("The guide.\n")


async def list_and_read(url: str, token: str | None = None) -> tuple[list[str], str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=20) as client,
        streamable_http_client(url, http_client=client) as (r, w, *_),
        ClientSession(r, w) as session,
    ):
        await session.initialize()
        uris = [str(res.uri) for res in (await session.list_resources()).resources]
        out = await session.call_tool("read_skill", {"key": "demo", "view": "summary"})
        return uris, out.content[0].text  # type: ignore[union-attr]


@pytest.mark.slow
def test_on_loopback_pages_and_rebinding_get_403_and_clients_work(
    project: Path, project_skills: Path, home: Path
):
    skills(project_skills)
    with serving("--http", "127.0.0.1:0", cwd=project) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        # A page on another origin, with the browser's Origin header.
        assert post(url, {"Origin": "https://evil.example"}).status_code == 403
        # DNS rebinding: evil.example now resolves to 127.0.0.1, the Host header says so.
        assert post(url, {"Host": f"evil.example:{port}"}).status_code == 403
        uris, summary = anyio.run(list_and_read, url)
    assert "skill://demo/guide.md" in uris
    assert not any(".env" in u for u in uris)
    # Paths relative to the skill: nothing of the serving machine's home or user name.
    assert "guide.md (skill://demo/guide.md)" in summary
    assert str(home) not in summary and str(project) not in summary


@pytest.mark.slow
def test_a_network_bind_needs_a_token_and_rejects_what_lacks_one(
    project: Path, project_skills: Path, tmp_path: Path
):
    skills(project_skills)
    tokens = tmp_path / "tokens"
    tokens.write_text("# clients\ns3cret-token\n")
    # 127.0.0.2 is loopback yet not one of the literal names: it counts as a network bind.
    with serving("--http", "127.0.0.2:0", "--token-file", str(tokens), cwd=project) as url:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            denied = post(url, headers)
            assert denied.status_code == 401
            assert denied.headers["www-authenticate"].startswith("Bearer")
        ok = {"Authorization": "Bearer s3cret-token"}
        assert post(url, ok, b"x" * (4 * 1024 * 1024 + 1)).status_code == 413
        assert post(url, {**ok, "Origin": "https://evil.example"}).status_code == 403
        uris, _ = anyio.run(list_and_read, url, "s3cret-token")
    assert "skill://demo/SKILL.md" in uris


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        lemon(*args, "--cwd", str(cwd)), capture_output=True, text=True, timeout=60
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert lines[0].startswith("error: ") and len(lines) <= 2, proc.stderr
    return lines[0]


@pytest.mark.parametrize("host", ["0.0.0.0", pytest.param("127.0.0.2", marks=pytest.mark.slow)])
def test_a_network_bind_without_tokens_is_refused_in_one_line(project: Path, host: str):
    proc = run_cli("--http", f"{host}:8765", cwd=project)
    assert proc.returncode == 2
    assert "without bearer tokens" in one_error_line(proc)
    assert "--token-file" in proc.stderr


@pytest.mark.slow
def test_start_up_failures_are_one_line(project: Path, tmp_path: Path):
    tokens = tmp_path / "tokens"
    tokens.write_text("t0ken\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        in_use = run_cli("--http", f"127.0.0.1:{port}", cwd=project)
    assert in_use.returncode == 1
    assert f"port {port} is already in use" in one_error_line(in_use)
    bad_port = run_cli("--http", "127.0.0.1:99999", cwd=project)
    assert bad_port.returncode == 2 and "above 65535" in one_error_line(bad_port)
    unknown = run_cli(
        "--http", "no-such-host.invalid:8765", "--token-file", str(tokens), cwd=project
    )
    assert unknown.returncode == 1 and "does not resolve" in one_error_line(unknown)
    missing = run_cli("--http", "0.0.0.0:8765", "--token-file", str(tmp_path / "x"), cwd=project)
    assert missing.returncode == 1 and "token file" in one_error_line(missing)


async def _keys(url: str, token: str) -> tuple[set[str], str]:
    """The skill keys ``find_skills`` answers with ``token``, and the session id it used."""
    ids: list[str] = []

    async def seen(response: httpx2.Response) -> None:
        ids.extend(v for k, v in response.headers.items() if k.lower() == "mcp-session-id")

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=20, event_hooks={"response": [seen]}) as c,
        streamable_http_client(url, http_client=c, terminate_on_close=False) as (r, w, *_),
        ClientSession(r, w) as session,
    ):
        await session.initialize()
        found = await session.call_tool("find_skills", {"query": "git", "limit": 10})
        text = found.content[0].text  # type: ignore[union-attr]
        return {m["key"] for m in json.loads(text)["matches"]}, ids[0] if ids else ""


def test_a_token_bound_to_an_agent_sees_that_profile_and_its_own_sessions(
    project: Path, project_skills: Path
):
    write_skill(project_skills, "git-commit", description="Write git commit messages.")
    write_skill(project_skills, "git-rebase", description="Rebase git branches safely.")
    (project / ".lemon" / "skills.json").write_text(
        json.dumps({"version": 1, "profiles": {"reviewer": {"deny": ["git-rebase"]}}})
    )
    grants = (Grant("all-token"), Grant("review-token", "reviewer"))
    exposure = Exposure("127.0.0.1", 0, grants=grants)
    urls: list[str] = []
    with anyio.from_thread.start_blocking_portal() as portal:
        future = portal.start_task_soon(
            lambda: serve_http(Options(cwd=project), exposure, urls.append)
        )
        deadline = time.monotonic() + 20
        while not urls and time.monotonic() < deadline:
            time.sleep(0.02)
        url = urls[0]
        everyone, session_id = portal.call(_keys, url, "all-token")
        reviewer, _ = portal.call(_keys, url, "review-token")
        # Another token cannot join the first token's session, even knowing its id.
        hijack = httpx2.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={
                **MCP_HEADERS,
                "Authorization": "Bearer review-token",
                "Mcp-Session-Id": session_id,
                "Mcp-Protocol-Version": "2025-06-18",
            },
            timeout=20,
        )
        future.cancel()
    assert session_id and hijack.status_code == 404
    assert everyone == {"git-commit", "git-rebase"}
    assert reviewer == {"git-commit"}
