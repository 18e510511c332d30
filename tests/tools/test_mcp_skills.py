"""Which configured MCP servers are asked for skills, and what that costs a listing."""

from __future__ import annotations

import json
import subprocess
import sys

from lemon_skills.mcp.config.locations import project_config_path
from lemon_skills.skills import enablement
from lemon_skills.tools.mcp_skills import McpSkillSource


def _mcp_json(project, **servers):
    path = project_config_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), "utf-8")


def test_only_servers_whose_skills_are_on_are_asked(project):
    _mcp_json(project, git={"command": "git-mcp"}, docs={"command": "d", "skills": "enabled"})
    assert McpSkillSource().servers(project) == ["docs"]


def test_a_server_switched_on_in_skills_json_is_asked(project):
    _mcp_json(project, git={"command": "git-mcp"})
    assert McpSkillSource().servers(project) == []
    enablement.set_switch(enablement.skills_json_path("global"), "git:*", True)
    assert McpSkillSource().servers(project) == ["git"]


def test_listing_with_only_tool_servers_does_not_load_the_config_parser(project):
    _mcp_json(project, git={"command": "git-mcp"})
    code = (
        "import sys, lemon_skills;"
        f"lemon_skills.list(cwd={str(project)!r});"
        "print('lemon_skills.mcp.config.resolve' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
