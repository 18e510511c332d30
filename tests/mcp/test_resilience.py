"""Servers that hang, report progress, die mid-request or forget their sessions: what a caller
sees, and that no tool call ever runs twice."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lemon_skills.errors import McpToolError
from tests.helpers.mcp import SERVERS, broken, rich
from tests.mcp.servers import flaky

pytestmark = pytest.mark.usefixtures("trusted_projects")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FLAKY_DIR", str(tmp_path))
    return tmp_path


def flaky_entry(name: str = "flaky", **extra: Any) -> dict[str, Any]:
    env = {"FLAKY_DIR": "${FLAKY_DIR}"}
    return (
        {"name": name, "command": sys.executable, "args": [str(SERVERS / "flaky.py")]}
        | {"env": env}
        | extra
    )


def test_progress_restarts_the_timeout_up_to_the_cap_and_a_timeout_cancels_on_the_server(
    make_source, state
):
    source = make_source([flaky_entry(timeout_ms=600, max_total_timeout_ms=2500)])
    seen: list[tuple[float, float | None, str | None]] = []
    result = source.call_tool(
        "mcp_flaky_long",
        {"seconds": 1.5, "every": 0.25},
        on_progress=lambda p, t, m: seen.append((p, t, m)),
    )
    assert result.text == "done"
    assert seen[0] == (1.0, 6.0, "step 1") and len(seen) == 6
    with pytest.raises(McpToolError, match="timed out after 0.3 s"):
        source.call_tool("mcp_flaky_long", {"seconds": 5, "every": 5}, timeout=0.3)
    deadline = time.monotonic() + 5
    while not (state / "cancelled").exists() and time.monotonic() < deadline:
        source.call_tool("mcp_flaky_count")  # drives the loop while the server reacts
    assert (state / "cancelled").exists()
    with pytest.raises(McpToolError, match="maximum of 2.5 s"):
        source.call_tool("mcp_flaky_long", {"seconds": 10, "every": 0.2})


def test_a_call_in_flight_when_the_server_dies_is_not_sent_again_but_a_read_is(make_source, state):
    source = make_source([flaky_entry()])
    with pytest.raises(McpToolError, match="may have run") as err:
        source.call_tool("mcp_flaky_crash")
    assert "going down now" in str(err.value)
    assert (state / "crash.runs").read_text() == "1"
    assert source.call_tool("mcp_flaky_count").text == "1"  # respawned for the next call
    read = source.call_tool("mcp_flaky_resource_read", {"uri": "flaky://once"})
    assert read.text == "second time" and (state / "once.seen").exists()


def test_a_stale_http_session_is_reopened_and_the_refused_call_sent_again(
    make_source, serve, state
):
    app = ForgetSessions(flaky.http_app())
    served = serve(app)
    source = make_source([{"name": "h", "url": served.url("/mcp"), "protocol": "legacy"}])
    assert source.call_tool("mcp_h_count").text == "1"
    app.forget()
    assert source.call_tool("mcp_h_count").text == "2"
    assert app.refused == 1
    app.forget()
    listed = json.loads(source.call_tool("mcp_h_resources_list").text)
    assert [r["uri"] for r in listed] == ["flaky://once"]


def test_a_call_starts_only_the_server_its_tool_belongs_to(make_source):
    hung = broken("hung", "hang", ready_timeout_ms=20_000)
    source = make_source([hung, rich("good")])
    started = time.monotonic()
    assert source.call_tool("mcp_good_echo", {"message": "x"}).text == "echo:x"
    assert time.monotonic() - started < 10
    assert source.status()["servers"]["hung"]["state"] == "pending"


class ForgetSessions:
    """ASGI middleware: after ``forget()``, requests of the sessions seen so far get the 404
    a restarted server gives for a session it does not know (they never reach the app)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: set[str] = set()
        self.stale: set[str] = set()
        self.refused = 0

    def forget(self) -> None:
        self.stale |= self.seen

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            session = headers.get("mcp-session-id")
            if session in self.stale and scope["method"] == "POST":
                self.refused += 1
                await send({"type": "http.response.start", "status": 404, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            if session:
                self.seen.add(session)
        await self.app(scope, receive, send)


def test_progress_and_cancellation_over_streamable_http(make_source, serve, state):
    served = serve(flaky.http_app())
    source = make_source([{"name": "h", "url": served.url("/mcp"), "timeout_ms": 600}])
    seen: list[float] = []
    done = source.call_tool(
        "mcp_h_long", {"seconds": 1.5, "every": 0.25}, on_progress=lambda p, t, m: seen.append(p)
    )
    assert done.text == "done" and seen == [1, 2, 3, 4, 5, 6]
    with pytest.raises(McpToolError, match="timed out after 0.3 s"):
        source.call_tool("mcp_h_long", {"seconds": 5, "every": 5}, timeout=0.3)
    deadline = time.monotonic() + 5
    while not (state / "cancelled").exists() and time.monotonic() < deadline:
        source.call_tool("mcp_h_count")
    assert (state / "cancelled").exists()


def test_the_cli_shows_progress_on_a_terminal(project, state, capsys, monkeypatch):
    from lemon_skills.cli import main

    (project / ".lemon").mkdir()
    doc = {"servers": [flaky_entry(timeout_ms=5000)]}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    args = ["mcp", "call", "mcp_flaky_long", "--args", '{"seconds": 0.2, "every": 0.1}']
    assert main([*args, "--cwd", str(project)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "done"
    assert "progress 1/2: step 1" in err and "progress 2/2: step 2" in err
