"""Secrets in a server's target never reach listings, status, errors or transport logs."""

from __future__ import annotations

import json
import logging
import socket
import sys

import pytest

from lemon_skills.cli import main
from lemon_skills.mcp.session import logs

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
