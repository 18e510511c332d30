"""Conversion of MCP results to ToolResult and JSON (with the SDK's own types)."""

from __future__ import annotations

from mcp import types

from lemon_skills.mcp.output.results import call_json, prompt_result, read_result, tool_result


def test_text_and_image_blocks_keep_their_shape():
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="see image"),
            types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
        ]
    )
    out = tool_result(result, server="s", tool="t")
    assert out.text == "see image\n[image: image/png, 3 bytes]"
    assert out.content[1] == {"type": "image", "data": "AAAA", "mime_type": "image/png"}
    assert call_json(out) == {
        "isError": False,
        "content": [out.content[0], {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "structuredContent": None,
    }


def test_text_blocks_keep_their_annotations_and_meta():
    annotated = types.TextContent(
        type="text", text="hi", annotations=types.Annotations(priority=0.5), _meta={"k": 1}
    )
    out = tool_result(types.CallToolResult(content=[annotated]), server="s", tool="t")
    assert out.content == (
        {"type": "text", "text": "hi", "annotations": {"priority": 0.5}, "meta": {"k": 1}},
    )
    assert call_json(out)["content"][0]["_meta"] == {"k": 1}


def test_structured_only_results_become_json_text():
    result = types.CallToolResult(content=[], structured_content={"n": 1}, is_error=True)
    out = tool_result(result, server="s", tool="t")
    assert out.is_error and out.text == '{"n": 1}'
    assert call_json(out)["structuredContent"] == {"n": 1}


def test_blob_resources_are_described_and_kept_as_data():
    result = types.ReadResourceResult(
        contents=[types.BlobResourceContents(uri="f://b", mime_type="image/gif", blob="R0lG")]
    )
    out = read_result(result, server="s", uri="f://b")
    assert out.text == "[resource f://b: image/gif, 3 bytes]"
    assert out.content[0]["resource"]["blob"] == "R0lG"


def test_prompts_come_back_as_json():
    result = types.GetPromptResult(
        description="d",
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text="hi"))
        ],
    )
    out = prompt_result(result, server="s", name="p")
    assert out.details["prompt_result"] == {
        "description": "d",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    }
