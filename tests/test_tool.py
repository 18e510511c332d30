from __future__ import annotations

from lemon_skills.tools import Tool, ToolContext, ToolResult


def _echo(params: dict[str, object], ctx: ToolContext) -> ToolResult:
    return ToolResult(f"ok {params}")


def test_parameters_are_validated_on_every_call_with_a_precise_reason():
    tool = Tool(
        name="echo",
        description="d",
        parameters={
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"],
        },
        handler=_echo,
    )
    assert tool.call({"n": 2}).text == "ok {'n': 2}"
    r = tool.call({"n": 0})
    assert (
        r.is_error and r.text == "Invalid parameters for echo: n: 0 is less than the minimum of 1"
    )
    r = tool.call({})
    assert r.is_error and "'n' is a required property" in r.text
    assert not tool.call({"n": 5}).is_error


def test_an_invalid_schema_does_not_make_the_tool_uncallable():
    tool = Tool(name="odd", description="d", parameters={"type": "no-such-type"}, handler=_echo)
    assert not tool.call({"anything": 1}).is_error


def test_text_and_definitions_are_estimated_by_one_ratio():
    from lemon_skills.tool import estimate_tokens

    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2  # a started token counts
    definition = {"name": "echo", "description": "Echo a message back."}
    assert estimate_tokens(definition) == estimate_tokens(
        '{"name":"echo","description":"Echo a message back."}'
    )
