"""The cheap look at MCP config that lets a skill listing skip the config parser: it may say
"maybe" too often, never "no" when a server's skills are on."""

from __future__ import annotations

import json

import pytest

from lemon_skills import settings
from lemon_skills.mcp.config import locations, resolve

pytestmark = pytest.mark.usefixtures("trusted_projects")


def _write(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document), "utf-8")


def test_no_config_or_servers_without_skills_offer_none(project):
    assert not locations.may_offer_skills(project, env={})
    _write(locations.global_config_path(), {"mcpServers": {"git": {"command": "git-mcp"}}})
    _write(locations.project_config_path(project), {"servers": [{"command": "web-mcp"}]})
    assert not locations.may_offer_skills(project, env={})
    assert resolve.skill_servers(resolve.load(project, env={})) == []


@pytest.mark.parametrize(
    "where",
    [
        "global",
        "project",
        "env",
    ],
)
@pytest.mark.parametrize(
    "text",
    [
        '{"mcpServers": {"docs": {"command": "docs-mcp", "skills": "enabled"}}}',
        '{"servers": [{"name": "docs", "command": "docs-mcp", "skills": "enabled"}]}',
        '{"mcpServers": {"docs": {"command": "docs-mcp", "\\u0073kills": "enabled"}}}',
    ],
)
def test_every_config_that_turns_skills_on_is_seen(project, where, text):
    env = {"LEMON_TRUST_PROJECT_MCP": "1"}
    if where == "env":
        env["LEMON_MCP_SERVERS"] = text
    else:
        path = locations.global_config_path() if where == "global" else None
        _write(path or locations.project_config_path(project), text)
    assert resolve.skill_servers(resolve.load(project, env=env)) == ["docs"]
    assert locations.may_offer_skills(project, env=env)


def test_servers_configured_in_code_always_count(project):
    settings.configure(mcp_servers=[{"name": "docs", "command": "docs-mcp"}])
    assert locations.may_offer_skills(project, env={})


def test_the_paths_are_the_ones_the_resolver_reads(project, agent_dir):
    assert locations.global_config_path() == agent_dir / "mcp.json"
    assert locations.project_config_path(project) == project / ".lemon" / "mcp.json"
    assert resolve.global_config_path is locations.global_config_path


def test_a_skills_json_switch_counts_only_where_a_server_is_configured(project):
    assert not locations.may_offer_skills(project, switched=True, env={})
    _write(locations.project_config_path(project), {"mcpServers": {"git": {"command": "g"}}})
    assert locations.may_offer_skills(project, switched=True, env={})
