from __future__ import annotations

import json

import pytest

from lemon_skills import settings
from lemon_skills.mcp.config import resolve

pytestmark = pytest.mark.usefixtures("trusted_projects")
#: The environment of a user who trusts project config (tests/mcp/config/test_trust.py: not).
TRUSTED = {"LEMON_TRUST_PROJECT_MCP": "1"}


def _write(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), "utf-8")


def _servers(**entries):
    return {"mcpServers": {name: {"command": cmd} for name, cmd in entries.items()}}


def test_a_project_entry_overrides_the_global_one_of_the_same_name(project):
    _write(resolve.global_config_path(), _servers(git="global-git", web="web"))
    _write(resolve.project_config_path(project), _servers(git="project-git"))
    config = resolve.load(project, env=TRUSTED)
    commands = {s.name: s.command for s in config.servers}
    assert commands == {"git": "project-git", "web": "web"}
    assert [s.command for s in config.overridden] == ["global-git"]


def test_programmatic_and_env_entries_outrank_files(project):
    _write(resolve.project_config_path(project), _servers(git="file-git"))
    env = {"LEMON_MCP_SERVERS": json.dumps([{"name": "git", "command": "env-git"}])}
    assert [s.command for s in resolve.load(project, env=env).servers] == ["env-git"]
    code = [{"name": "git", "command": "code-git"}]
    assert [s.command for s in resolve.load(project, servers=code, env=env).servers] == ["code-git"]


def test_unnamed_identical_entries_collapse_into_one(project):
    entry = {"command": "srv", "args": ["--x"]}
    config = resolve.load(project, servers=[entry, dict(entry)], include_config=False)
    assert len(config.servers) == 1
    assert config.servers[0].name


def test_broken_sources_are_issues_and_the_rest_still_loads(project):
    resolve.project_config_path(project).parent.mkdir(parents=True)
    resolve.project_config_path(project).write_text("{broken", "utf-8")
    _write(resolve.global_config_path(), _servers(web="web"))
    config = resolve.load(project, env={"LEMON_MCP_SERVERS": "not json"})
    assert [s.name for s in config.servers] == ["web"]
    reasons = " | ".join(i.reason for i in config.issues)
    assert "corrupt JSON" in reasons and "LEMON_MCP_SERVERS is not valid JSON" in reasons


def test_project_switch_turns_mcp_off_there_and_back_on_over_global(project):
    _write(resolve.global_config_path(), {"enabled": False, **_servers(web="web")})
    off = resolve.load(project, env=TRUSTED)
    assert off.active() == ()
    assert off.disabled_reason == 'disabled by the global mcp.json ("enabled": false)'
    assert off.state_of(off.servers[0]) == "off"
    _write(resolve.project_config_path(project), {"enabled": True})
    assert [s.name for s in resolve.load(project, env=TRUSTED).active()] == ["web"]


@pytest.mark.parametrize("value", ["1", "TRUE", " yes ", "on"])
def test_env_switch_disables_everywhere(project, value):
    config = resolve.load(project, servers=[{"command": "x"}], env={"LEMON_MCP_DISABLED": value})
    assert config.disabled_reason == "disabled by LEMON_MCP_DISABLED"


def test_the_callers_switch_wins_over_every_other(project):
    settings.configure(mcp_disabled=True)
    assert resolve.load(project, env={}).disabled_reason.startswith("disabled by lemon_skills")
    assert resolve.load(project, env={}, disabled=False).enabled


def test_a_disabled_entry_is_listed_but_not_active(project):
    config = resolve.load(
        project, servers=[{"name": "a", "command": "x", "enabled": False}], include_config=False
    )
    assert config.active() == ()
    [row] = config.server_dicts()
    assert (row["state"], row["active"]) == ("disabled", False)


def test_fingerprint_changes_when_a_config_file_changes(project):
    before = resolve.fingerprint(project, None, env={})
    _write(resolve.project_config_path(project), _servers(git="git"))
    assert resolve.fingerprint(project, None, env={}) != before


def test_skill_servers_are_the_switched_on_ones(project):
    servers = [{"name": "a", "command": "x"}, {"name": "b", "command": "y"}]
    config = resolve.load(project, servers=servers, include_config=False)
    assert resolve.skill_servers(config) == []
    assert resolve.skill_servers(config, {"b": True}) == ["b"]


def test_a_user_switch_wins_over_the_entry(project):
    servers = [{"name": "a", "command": "x", "skills": "enabled"}, {"name": "b", "command": "y"}]
    config = resolve.load(project, servers=servers, include_config=False)
    assert resolve.skill_servers(config) == ["a"]
    assert resolve.skill_servers(config, {"a": False, "b": True}) == ["b"]
