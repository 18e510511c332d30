"""What a new user gets wrong in mcp.json, and what lemon says about it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lemon_skills.cli import main
from lemon_skills.skills.catalog import enablement


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _global_config(agent_dir: Path, doc: dict) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture
def corrupt(project):
    (project / ".lemon").mkdir()
    (project / ".lemon" / "mcp.json").write_text('{"mcpServers": {"a": {},}', encoding="utf-8")
    return project


@pytest.mark.parametrize("command", ["list", "status", "tools", "resources"])
def test_a_corrupt_config_is_an_error_not_an_empty_list(corrupt, capsys, command):
    code, out, err = _run(capsys, "mcp", command, "--cwd", str(corrupt))
    assert code == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and "corrupt JSON" in lines[0]
    assert lines[1].startswith("hint: ") and len(lines) == 2
    assert "no MCP servers configured" not in err


def test_prompt_with_tools_names_the_servers_it_dropped(project, agent_dir, capsys):
    bad = {"command": sys.executable, "timeout_ms": -1}
    _global_config(agent_dir, {"mcpServers": {"weather": bad}})
    code, _out, err = _run(capsys, "prompt", "--tools", "weather", "--cwd", str(project))
    assert code == 0
    assert "MCP server 'weather' dropped" in err and "timeout_ms" in err


def test_prompt_with_tools_names_a_corrupt_file(corrupt, capsys):
    code, _out, err = _run(capsys, "prompt", "--tools", "anything", "--cwd", str(corrupt))
    assert code == 0
    assert f"the MCP servers of {corrupt / '.lemon' / 'mcp.json'} dropped" in err


def test_validate_knows_the_documented_skills_key(project, agent_dir, capsys):
    entry = {"command": sys.executable, "skills": "enabled"}
    _global_config(agent_dir, {"mcpServers": {"docs": entry}})
    code, _out, err = _run(capsys, "mcp", "validate", "--cwd", str(project))
    assert code == 0
    assert "unknown key" not in err


def test_validate_fails_on_a_missing_executable(project, agent_dir, capsys):
    entry = {"command": "lemon-test-no-such-command"}
    _global_config(agent_dir, {"mcpServers": {"ghost": entry}})
    code, out, err = _run(capsys, "mcp", "validate", "--cwd", str(project))
    assert code == 1
    assert "ok" not in out
    assert "executable not found: lemon-test-no-such-command" in err


@pytest.fixture
def dashed(project, agent_dir):
    """The README's example: a server called ``my-skills``, its skills not turned on."""
    entry = {"command": sys.executable, "args": ["-c", "pass"]}
    _global_config(agent_dir, {"mcpServers": {"my-skills": entry}})
    return project


def test_skill_list_says_a_servers_skills_are_off_and_how_to_turn_them_on(dashed, capsys):
    code, _out, err = _run(capsys, "skill", "list", "--cwd", str(dashed))
    assert code == 0
    assert "'my_skills' (my-skills in its config) are off" in err
    assert "lemon skill enable 'my_skills:*'" in err


def test_enable_accepts_the_server_name_as_the_config_spells_it(dashed, capsys):
    code, out, _ = _run(capsys, "skill", "enable", "my-skills:*", "--cwd", str(dashed))
    assert code == 0 and "no server of that name" not in out
    state = json.loads(enablement.skills_json_path("global").read_text())
    assert state["skills"] == {"my_skills:*": {"enabled": True}}


def test_enabling_an_unknown_server_fails_and_writes_nothing(dashed, capsys):
    code, _out, err = _run(capsys, "skill", "enable", "my-skils:*", "--cwd", str(dashed))
    assert code == 1 and err.startswith("error: ")
    assert not enablement.skills_json_path("global").exists()


def test_list_and_status_accept_the_server_name_as_the_config_spells_it(dashed, capsys):
    code, out, _ = _run(capsys, "mcp", "list", "--json", "--cwd", str(dashed))
    assert json.loads(out)["servers"][0]["config_name"] == "my-skills"
    code, out, _ = _run(capsys, "mcp", "status", "my-skills", "--json", "--cwd", str(dashed))
    assert list(json.loads(out)["servers"]) == ["my_skills"]
