from __future__ import annotations

import json
import sys

from lemon_skills.mcp.config import lint
from lemon_skills.mcp.config.resolve import project_config_path


def test_a_misspelt_key_suggests_the_right_one():
    [warning] = lint.entry_warnings({"command": sys.executable, "arg": ["-V"]})
    assert warning == "unknown key 'arg' (did you mean 'args'?)"


def test_a_command_with_its_arguments_says_how_to_split_it():
    [warning] = lint.entry_warnings({"command": "no-such-tool-xyz -y pkg"})
    assert warning == (
        'executable not found: no-such-tool-xyz -y pkg; arguments belong in "args": '
        '"command": "no-such-tool-xyz", "args": ["-y", "pkg"]'
    )


def test_a_runnable_command_and_an_env_reference_are_fine():
    assert lint.entry_warnings({"command": sys.executable, "args": ["-V"]}) == []
    assert lint.entry_warnings({"command": "$HOME/bin/server"}) == []


def test_the_entrys_own_path_is_searched(tmp_path):
    tool = tmp_path / "bin" / "my-server"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n", "utf-8")
    tool.chmod(0o755)
    entry = {"command": "my-server", "env": {"PATH": str(tool.parent)}}
    assert lint.entry_warnings(entry) == []


def test_a_relative_command_is_found_from_the_projects_directory(tmp_path):
    tool = tmp_path / "tools" / "srv"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n", "utf-8")
    assert not lint.executable_found("tools/srv", tmp_path, None)  # not executable yet
    tool.chmod(0o755)
    assert lint.executable_found("tools/srv", tmp_path, None)


def test_a_document_without_servers_is_one_warning():
    [issue] = lint.lint_document({"mcpServers": {}}, origin="global")
    assert issue.reason == "no MCP servers are configured"


def test_sources_are_linted_with_their_origin_and_name(project):
    path = project_config_path(project)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"mcpServers": {"git": {"command": sys.executable, "tmeout": 1}}}), "utf-8"
    )
    env = {"LEMON_MCP_SERVERS": json.dumps([{"name": "w", "url": "https://x/mcp", "header": {}}])}
    issues = lint.lint_sources(project, env=env)
    assert [(i.origin, i.name) for i in issues] == [("env", "w"), ("project", "git")]
    assert "did you mean 'headers'?" in issues[0].reason
