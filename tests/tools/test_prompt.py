from __future__ import annotations

import pytest

import lemon_skills
from lemon_skills.mcp.source import McpSource
from lemon_skills.tool import to_anthropic, to_openai
from lemon_skills.tools import ToolRegistry
from tests.helpers.mcp import smoke
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.usefixtures("in_memory")


def test_one_call_gives_the_skills_and_the_tools_within_one_budget(project, project_skills):
    write_skill(project_skills, "echoes", description="How to echo messages back politely")
    write_skill(project_skills, "k8s", description="Debug Kubernetes pods with kubectl")
    source = McpSource([smoke("fx")], include_config=False)
    try:
        registry = ToolRegistry(builtins=[], mcp_source=source)
        alone = lemon_skills.render_prompt("echo a message back", cwd=project)
        assert alone.tools == () and alone.tool_chars == 0
        both = lemon_skills.prompt.render(
            "echo a message back", cwd=project, tools=True, registry=registry, budget=6000
        )
        names = [t.name for t in both.tools]
        assert "mcp_fx_echo" in names and names[-1] == "tool_search"
        assert "mcp_fx_prompt_get" not in names  # deferred: found through tool_search
        assert both.relevant == ("echoes",)
        assert len(both.text) + both.tool_chars <= both.budget == 6000
        assert to_openai(list(both.tools)) and to_anthropic(list(both.tools))
        # A tight budget sends fewer ranked tools rather than crowding out the skills.
        tight = lemon_skills.prompt.render(
            "echo a message back", cwd=project, tools=True, registry=registry, budget=1400
        )
        assert "mcp_fx_echo" not in [t.name for t in tight.tools]
        assert 0 < tight.tool_chars <= 700
    finally:
        source.close()
