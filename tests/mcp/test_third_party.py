"""Third-party servers as real peers: @modelcontextprotocol/server-everything (npm; stdio and
Streamable HTTP) and mcp-server-time (PyPI).

Run with ``pytest -m integration`` after installing them:
``npm install --prefix <repo> @modelcontextprotocol/server-everything`` and
``pip install mcp-server-time``. ``MCP_SERVER_EVERYTHING`` (path to its ``dist/index.js``) and
``MCP_SERVER_TIME`` (path to the executable) override where they are looked for.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def everything_js() -> str:
    default = (
        REPO / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    )
    path = Path(os.environ.get("MCP_SERVER_EVERYTHING", default))
    assert path.is_file(), f"server-everything not installed at {path} (see module docstring)"
    return str(path)


def time_server() -> str:
    found = os.environ.get("MCP_SERVER_TIME") or shutil.which("mcp-server-time")
    found = found or str(Path(sys.executable).parent / "mcp-server-time")
    assert Path(found).is_file(), "mcp-server-time not installed (pip install mcp-server-time)"
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def everything_http() -> Iterator[str]:
    """server-everything in Streamable HTTP mode; yields its /mcp URL once it listens."""
    port = free_port()
    proc = subprocess.Popen(
        ["node", everything_js(), "streamableHttp"],
        env=os.environ | {"PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    listening = threading.Event()

    def watch() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "listening" in line.lower():
                listening.set()

    threading.Thread(target=watch, daemon=True).start()
    try:
        assert listening.wait(30), "server-everything did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout:
            proc.stdout.close()


def test_server_everything_over_stdio(make_source):
    source = make_source([{"command": "node", "args": [everything_js(), "stdio"]}])
    tools = {t.name for t in source.discover_tools()}
    assert {
        "mcp_everything_echo",
        "mcp_everything_get_sum",
        "mcp_everything_resource_read",
    } <= tools
    assert source.call_tool("mcp_everything_echo", {"message": "hi"}).text == "Echo: hi"
    assert "5" in source.call_tool("mcp_everything_get_sum", {"a": 2, "b": 3}).text
    resources = json.loads(source.call_tool("mcp_everything_resources_list").text)
    assert resources and all("uri" in r or "uriTemplate" in r for r in resources)
    uri = next(r["uri"] for r in resources if "uri" in r)
    assert source.call_tool("mcp_everything_resource_read", {"uri": uri}).text
    prompt = json.loads(
        source.call_tool("mcp_everything_prompt_get", {"name": "simple-prompt"}).text
    )
    assert prompt["messages"][0]["role"] == "user"
    status = source.status()["servers"]["everything"]
    assert status["connected"] and status["protocol_version"] == "2025-11-25"


def test_server_everything_over_streamable_http(make_source, everything_http):
    source = make_source([{"name": "ev", "url": everything_http}])
    assert source.call_tool("mcp_ev_echo", {"message": "web"}).text == "Echo: web"
    status = source.status()["servers"]["ev"]
    assert status["transport"] == "http" and status["capabilities"]["prompts"] is True


def test_mcp_server_time_over_stdio(make_source):
    source = make_source([{"command": time_server(), "args": ["--local-timezone", "UTC"]}])
    result = source.call_tool("mcp_time_get_current_time", {"timezone": "Europe/London"})
    assert not result.is_error
    assert json.loads(result.text)["timezone"] == "Europe/London"
    assert source.status()["servers"]["time"]["protocol_version"] == "2026-07-28"


def test_server_everything_long_operation_outlives_its_timeout_on_progress(make_source):
    source = make_source(
        [{"name": "ev", "command": "node", "args": [everything_js(), "stdio"], "timeout_ms": 2000}]
    )
    steps: list[float] = []
    result = source.call_tool(
        "mcp_ev_trigger_long_running_operation",
        {"duration": 3, "steps": 6},
        on_progress=lambda p, t, m: steps.append(p),
    )
    assert not result.is_error and "Duration: 3 seconds" in result.text
    assert steps == [1, 2, 3, 4, 5, 6]
