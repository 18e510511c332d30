"""The gateway over stdio: upstream tools under lemon's names, resources and prompts
namespaced, skills as `lemon mcp serve` serves them, bad input answered clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.gateway.conftest import gateway
from tests.helpers.mcp import broken, smoke
from tests.helpers.skills import write_skill

def test_tools_resources_prompts_and_skills_through_one_server(
    project: Path, servers: Any, project_skills: Path
) -> None:
    servers(smoke("fx"))
    write_skill(project_skills, "alpha", description="Deploy kubernetes clusters with helm.")
    anyio.run(_tools_resources_prompts, project)


async def _tools_resources_prompts(project: Path) -> None:
    async with gateway(project, "--tools", "all") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"mcp_fx_echo", "mcp_fx_fail", "find_skills", "read_skill"} <= names
        skills = [str(r.uri) for r in (await s.list_resources()).resources]
        assert "skill://alpha/SKILL.md" in skills
        out = await s.call_tool("mcp_fx_echo", {"message": "hi"})
        assert not out.is_error and out.content[0].text == "echo:hi"
        failed = await s.call_tool("mcp_fx_fail", {})
        assert failed.is_error and "planned failure" in failed.content[0].text
        uris = [str(r.uri) for r in (await s.list_resources()).resources]
        assert "mcp+fx:fixture://status" in uris
        read = await s.read_resource("mcp+fx:fixture://status")
        assert read.contents[0].text == "status:ok"
        prompts = {p.name for p in (await s.list_prompts()).prompts}
        assert "mcp_fx_brief" in prompts
        got = await s.get_prompt("mcp_fx_brief", {"topic": "cats"})
        assert "cats" in got.messages[0].content.text
