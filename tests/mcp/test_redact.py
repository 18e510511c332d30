"""Secrets in a server's target or in what it writes to stderr never reach listings, status,
errors or transport logs."""

from __future__ import annotations

import json
import logging
import socket
import sys

import pytest

from lemon_skills.cli import main
from lemon_skills.errors import McpToolError
from lemon_skills.mcp.session import logs
from tests.helpers.mcp import SERVERS, broken
from tests.mcp.servers.broken import LEAKED

SECRETS = ("hunter2", "sk-live-123", "tok-456", "q-secret-789", "ghp_abcdef")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://bob:hunter2@h.example/mcp", "https://bob:***@h.example/mcp"),
        ("https://ghp_abcdef@h.example/mcp", "https://***@h.example/mcp"),
        ("https://h.example/mcp?api_key=sk-1&x=1", "https://h.example/mcp?api_key=***&x=1"),
        (
            "https://h.example/?token=a&key=b&secret=c",
            "https://h.example/?token=***&key=***&secret=***",
        ),
        ("srv --api-key=sk-1 --port 80", "srv --api-key=*** --port 80"),
        ("srv --token tok-1 --verbose", "srv --token *** --verbose"),
        ("env API_KEY=sk-1 node s.js", "env API_KEY=*** node s.js"),
        ("srv --no-auth --port 80", "srv --no-auth --port 80"),
        ("401 for Authorization: Bearer sk-abc.def", "401 for Authorization: ***"),
        ("X-Api-Key: k-123, retrying", "X-Api-Key: ***, retrying"),
        ("sent Bearer eyJhbGciOi.x-y", "sent Bearer ***"),
        ("using ghp_0123456789abcdefghij now", "using *** now"),
        ("key sk-proj-0123456789abcdef ok", "key *** ok"),
        ("listening on host:8080", "listening on host:8080"),
    ],
)
def test_redact(text, shown):
    assert logs.redact(text) == shown


def test_redact_argv_masks_the_value_after_a_secret_option():
    argv = ["--token", "tok-1", "--api-key=sk-1", "--port", "80", "--key", "-v"]
    assert logs.redact_argv(argv) == [
        "--token",
        "***",
        "--api-key=***",
        "--port",
        "80",
        "--key",
        "-v",
    ]


def test_transport_log_records_are_redacted():
    record = logging.LogRecord(
        "mcp.client.streamable_http",
        logging.INFO,
        __file__,
        1,
        "connecting to %s",
        ("https://u:hunter2@h.example/?api_key=sk-live-123",),
        None,
    )
    logs.RedactPayloads().filter(record)
    assert "hunter2" not in record.getMessage() and "sk-live-123" not in record.getMessage()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def secret_servers(agent_dir, project):
    port = _closed_port()
    servers = {
        "web": {
            "url": f"http://bob:hunter2@127.0.0.1:{port}/mcp?api_key=sk-live-123",
            "ready_timeout_ms": 3000,
        },
        "cmd": {
            "command": sys.executable,
            "args": [
                "-c",
                "import sys; sys.exit(3)",
                "--token",
                "tok-456",
                "--secret=q-secret-789",
            ],
            "ready_timeout_ms": 3000,
        },
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return project


@pytest.mark.parametrize("command", [["mcp", "list"], ["mcp", "list", "--json"]])
def test_list_shows_no_secret(secret_servers, capsys, command):
    assert main([*command, "--cwd", str(secret_servers)]) == 0
    out, err = capsys.readouterr()
    assert "127.0.0.1" in out
    assert not [s for s in SECRETS if s in out + err]


def test_status_and_its_errors_show_no_secret(secret_servers, capsys):
    code = main(["mcp", "status", "--json", "--cwd", str(secret_servers)])
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 1 and data["servers"]["web"]["last_error"]
    assert not [s for s in SECRETS if s in out + err]


#: The non-secret words ``broken.py leak`` writes around its secrets.
LEAK_CONTEXT = ("fatal: upstream said 401 to Authorization:", "retrying with", "git.example")


def test_a_crashing_servers_stderr_reaches_status_without_its_secrets(agent_dir, project, capsys):
    agent_dir.mkdir(parents=True, exist_ok=True)
    doc = {"servers": [broken("leaky", "leak", ready_timeout_ms=5000)]}
    (agent_dir / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    code = main(["mcp", "status", "leaky", "--json", "--cwd", str(project)])
    out, err = capsys.readouterr()
    status = json.loads(out)["servers"]["leaky"]
    assert code == 1 and status["stderr_tail"] and status["last_error"]
    shown = " ".join(status["stderr_tail"]) + status["last_error"]
    assert all(part in shown for part in LEAK_CONTEXT), shown
    assert not [s for s in LEAKED if s in out + err]


def test_a_call_that_kills_the_server_explains_it_without_its_secrets(make_source, tmp_path):
    words = f"flaky: giving up, Authorization: Bearer {LEAKED[0]} was refused"
    entry = {
        "name": "flaky",
        "command": sys.executable,
        "args": [str(SERVERS / "flaky.py")],
        "env": {"FLAKY_DIR": str(tmp_path), "FLAKY_LAST_WORDS": words},
    }
    source = make_source([entry])
    with pytest.raises(McpToolError) as err:
        source.call_tool("mcp_flaky_crash")
    assert "flaky: giving up, Authorization:" in str(err.value) and "was refused" in str(err.value)
    assert LEAKED[0] not in str(err.value)
