"""``ToolResult`` values (what ``McpSource`` returns, after its result cap) back into MCP
results for the host; a cut result gets a ``resource_link`` to the whole of it, a gateway
resource only the client that received it can read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp import types
from pydantic import TypeAdapter, ValidationError

from lemon_skills.mcp.output.results import wire_names
from lemon_skills.tool import ToolResult

#: The whole of a cut result: ``lemon-result:<id>``.
RESULT_SCHEME = "lemon-result:"
_BLOCK: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)


def call_result(result: ToolResult) -> types.CallToolResult:
    """The MCP result of a tool call (rich blocks kept, the text when there are none)."""
    blocks = [_block(b) for b in result.content] if result.content else []
    content = [b for b in blocks if b is not None]
    if not content or len(content) != len(blocks):
        content = [types.TextContent(type="text", text=result.text)]
    spilled = result.details.get("spilled")
    if isinstance(spilled, Mapping) and spilled.get("id"):
        content.append(
            types.ResourceLink(
                type="resource_link",
                uri=f"{RESULT_SCHEME}{spilled['id']}",
                name=f"result-{spilled['id']}",
                description="The whole result; read it with resources/read or read_result.",
                mime_type="text/plain",
            )
        )
    structured = result.details.get("structured")
    return types.CallToolResult(
        content=content,
        structured_content=structured if isinstance(structured, dict) else None,
        is_error=result.is_error,
    )


def error_result(text: str) -> types.CallToolResult:
    """A tool-level failure the model reads (and may correct)."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def spilled_id(result: ToolResult) -> str | None:
    """The id of the saved whole result, when ``result`` was cut."""
    spilled = result.details.get("spilled")
    return str(spilled["id"]) if isinstance(spilled, Mapping) and spilled.get("id") else None


def read_contents(uri: str, result: ToolResult) -> types.ReadResourceResult:
    """A resource read through the source (``resource_read``), under the gateway's ``uri``."""
    out: list[types.TextResourceContents | types.BlobResourceContents] = []
    for item in result.details.get("contents") or ():
        mime = item.get("mime_type")
        if "blob" in item:
            out.append(types.BlobResourceContents(uri=uri, mime_type=mime, blob=item["blob"]))
        else:
            out.append(
                types.TextResourceContents(uri=uri, mime_type=mime, text=item.get("text", ""))
            )
    if not out:
        out.append(types.TextResourceContents(uri=uri, mime_type="text/plain", text=result.text))
    return types.ReadResourceResult(contents=out)


def prompt_contents(result: ToolResult) -> types.GetPromptResult:
    """A prompt got through the source (``prompt_get``)."""
    data: Any = result.details.get("prompt_result") or {}
    messages = [
        types.PromptMessage(role=m["role"], content=_block(m["content"]) or _text(m["content"]))
        for m in data.get("messages") or ()
    ]
    return types.GetPromptResult(description=data.get("description"), messages=messages)


def _text(value: Any) -> types.TextContent:
    return types.TextContent(type="text", text=str(value))


def _block(block: Mapping[str, Any]) -> Any:
    if block.get("type") == "text" and len(block) == 2:
        return types.TextContent(type="text", text=block["text"])
    try:
        return _BLOCK.validate_python(wire_names(dict(block)))
    except ValidationError:
        return None
