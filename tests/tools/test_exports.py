from __future__ import annotations

import lemon_skills.tools as tools
from lemon_skills.tools import Tool, ToolContext, ToolResult, read_skill, skill_manage


def test_the_tool_contract_is_importable_from_lemon_skills_tools():
    assert isinstance(read_skill, Tool) and isinstance(skill_manage, Tool)
    assert (read_skill.name, skill_manage.name) == ("read_skill", "skill_manage")
    assert read_skill.parameters["type"] == "object" and skill_manage.description
    assert tools.__all__ == sorted(tools.__all__)
    assert {"Tool", "ToolContext", "ToolResult", "read_skill", "skill_manage"} <= set(tools.__all__)


def test_context_fields_are_all_optional_keywords(project):
    ctx = ToolContext(
        cwd=project, tool_call_id="t", run_id="r", session_key="k", session_id="s", agent_id="a"
    )
    assert ctx.metadata() == {
        "tool_call_id": "t",
        "run_id": "r",
        "session_key": "k",
        "session_id": "s",
        "agent_id": "a",
    }
    result = read_skill.call({"key": "nothing-here"}, ToolContext(cwd=project))
    assert isinstance(result, ToolResult) and result.is_error and result.text and result.details


def test_skill_manage_schema_lists_every_action_and_scope():
    props = skill_manage.to_openai()["function"]["parameters"]["properties"]
    assert props["action"]["enum"] == [
        "create", "edit", "patch", "delete", "write_file", "remove_file",
        "pin", "unpin", "archive", "restore", "report",
    ]  # fmt: skip
    assert props["scope"]["enum"] == ["project", "global"]
