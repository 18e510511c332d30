"""Project MCP trust: a cloned repository's ``.lemon/mcp.json`` starts nothing until trusted.

Each attack test configures a project stdio server that writes a marker file when started and
then serves the smoke fixture; every implicit consumer must leave the marker absent, and the
same server must start once the file is trusted, and stop starting once the file is edited.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lemon_skills.cli import main
from lemon_skills.mcp.config import resolve, trust
from lemon_skills.mcp.source import McpSource
from lemon_skills.tools.registry import ToolRegistry

_SERVER = """
import pathlib, runpy, sys
pathlib.Path(sys.argv.pop(1)).write_text("started")
runpy.run_module("lemon_skills.selftest.fixtures.server", run_name="__main__")
"""


@pytest.fixture
def hostile(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A project whose mcp.json starts a marker-writing server with its skills turned on."""
    marker = tmp_path / "marker"
    (project / "evil.py").write_text(_SERVER, encoding="utf-8")
    entry = {"command": sys.executable, "args": ["evil.py", str(marker)], "skills": "enabled"}
    (project / ".lemon").mkdir()
    config = project / ".lemon" / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"evil": entry}}), encoding="utf-8")
    return project, marker


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv",
    [
        ["prompt", "hello"],
        ["prompt", "--tools", "echo a message"],
        ["skill", "list"],
        ["skill", "find", "echo"],
    ],
)
def test_implicit_commands_start_no_untrusted_project_server(hostile, capsys, caplog, argv):
    project, marker = hostile
    code, _out, _err = _cli(capsys, *argv, "--cwd", str(project))
    assert code == 0
    assert not marker.exists()
    assert "lemon mcp trust --cwd" in caplog.text and "evil" in caplog.text


def test_the_cli_says_in_one_stderr_line_what_it_skipped(hostile):
    project, marker = hostile
    done = subprocess.run(
        [sys.executable, "-m", "lemon_skills", "skill", "list", "--cwd", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert not marker.exists()
    lines = [line for line in done.stderr.splitlines() if "lemon mcp trust" in line]
    assert len(lines) == 1 and "evil" in lines[0]


def test_registry_and_source_start_no_untrusted_project_server(hostile, caplog):
    project, marker = hostile
    with McpSource(cwd=project) as source:
        tools = ToolRegistry(builtins=[], mcp_source=source).get_tools(project)
        status = source.status()
    assert tools == []
    assert not marker.exists()
    assert status["servers"]["evil"]["state"] == "untrusted"
    assert "lemon mcp trust" in status["untrusted_project"]["notice"]
    assert "lemon mcp trust --cwd" in caplog.text


def test_trust_starts_the_server_and_an_edit_takes_trust_back(hostile, capsys, caplog):
    project, marker = hostile
    code, out, _ = _cli(capsys, "mcp", "trust", "--yes", "--json", "--cwd", str(project))
    assert code == 0 and json.loads(out)["trusted"] is True
    code, out, err = _cli(capsys, "prompt", "--tools", "echo a message", "--cwd", str(project))
    assert code == 0 and marker.exists() and "mcp_evil_echo" in out + err
    marker.unlink()
    config = project / ".lemon" / "mcp.json"
    config.write_text(config.read_text() + " ", encoding="utf-8")
    code, _out, _err = _cli(capsys, "skill", "list", "--cwd", str(project))
    assert code == 0 and not marker.exists()
    assert "changed since trusted" in caplog.text


def test_trust_without_yes_off_a_terminal_refuses_and_records_nothing(hostile, capsys):
    project, _marker = hostile
    code, _out, err = _cli(capsys, "mcp", "trust", "--cwd", str(project))
    assert code == 1
    assert "error:" in err and "--yes" in err
    assert trust.trusted_files() == {}


def test_revoke_and_list(hostile, capsys):
    project, _marker = hostile
    _cli(capsys, "mcp", "trust", "--yes", "--cwd", str(project))
    code, out, _ = _cli(capsys, "mcp", "trust", "--list", "--json")
    assert [r["state"] for r in json.loads(out)["trusted"]] == ["current"]
    code, out, _ = _cli(capsys, "mcp", "trust", "--revoke", "--json", "--cwd", str(project))
    assert code == 0 and json.loads(out)["revoked"] is True
    assert resolve.load(project, notify=False).active() == ()


def test_env_variable_trusts_every_project(hostile):
    project, _marker = hostile
    config = resolve.load(project, env={trust.ENV: "1"}, notify=False)
    assert [s.name for s in config.active()] == ["evil"]


def test_untrusted_entries_are_listed_marked_untrusted(hostile, capsys):
    project, _marker = hostile
    code, out, _ = _cli(capsys, "mcp", "list", "--json", "--cwd", str(project))
    data = json.loads(out)
    assert code == 0
    assert [(s["name"], s["state"], s["trusted"]) for s in data["servers"]] == [
        ("evil", "untrusted", False)
    ]
    assert data["project_trust"]["state"] == "unknown"


def test_an_untrusted_project_cannot_replace_a_global_server_of_the_same_name(hostile, agent_dir):
    project, _marker = hostile
    mine = {"mcpServers": {"evil": {"command": "my-own-server"}}}
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(json.dumps(mine), encoding="utf-8")
    config = resolve.load(project, notify=False)
    assert [(s.name, s.command) for s in config.active()] == [("evil", "my-own-server")]


def test_an_untrusted_project_cannot_turn_mcp_back_on(hostile, agent_dir):
    project, _marker = hostile
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text('{"enabled": false}', encoding="utf-8")
    doc = json.loads((project / ".lemon" / "mcp.json").read_text())
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc | {"enabled": True}))
    assert resolve.load(project, notify=False).enabled is False


def test_trust_is_keyed_by_content(tmp_path):
    path = tmp_path / "mcp.json"
    assert trust.check(path, b"{}").state == "unknown"
    trust.trust(path, b"{}")
    assert trust.check(path, b"{}").trusted
    assert trust.check(path, b"{} ").state == "changed"
    assert json.loads(trust.store_path().read_text())["version"] == trust.VERSION


def test_a_corrupt_trust_store_trusts_nothing(tmp_path):
    trust.store_path().parent.mkdir(parents=True, exist_ok=True)
    trust.store_path().write_text("{not json", encoding="utf-8")
    assert trust.check(tmp_path / "mcp.json", b"{}").state == "unknown"


def test_the_notice_is_said_once_per_file_content(hostile, caplog):
    project, _marker = hostile
    for _ in range(3):
        resolve.load(project)
    assert caplog.text.count("lemon mcp trust --cwd") == 1
