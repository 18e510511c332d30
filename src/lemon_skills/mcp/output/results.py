"""MCP results as ``ToolResult`` values and plain JSON (pure).

Content blocks keep their MCP shape in snake_case (``{"type": "image", "data": <base64>,
"mime_type": "image/png"}``, ``{"type": "resource", "resource": {...}}``); the text a model
reads joins the text blocks and describes the others.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types

from lemon_skills.tool import ToolResult


def block_dict(block: Any) -> dict[str, Any]:
    """One content block as JSON (``_meta`` becomes ``meta``; empty fields dropped)."""
    if type(block) is types.TextContent and block.annotations is None and block.meta is None:
        # The usual block, built directly: a model dump costs more than the rest of the
        # conversion on every tool call.
        return {"type": "text", "text": block.text}
    data: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return data


def block_text(block: Any) -> str:
    """What a model should read for one block."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, types.EmbeddedResource):
        return contents_text(block.resource)
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}" + (f" ({block.name})]" if block.name else "]")
    return json.dumps(block_dict(block), ensure_ascii=False)


def contents_text(item: Any) -> str:
    """Text of one resource contents item (text as is, blobs described)."""
    if isinstance(item, types.TextResourceContents):
        return item.text
    mime = getattr(item, "mime_type", None) or "application/octet-stream"
    return f"[resource {item.uri}: {mime}, {_decoded_size(getattr(item, 'blob', ''))} bytes]"


def tool_result(result: types.CallToolResult, *, server: str, tool: str) -> ToolResult:
    """A tool call's result: text, rich blocks, structured content and the error flag."""
    blocks = tuple([block_dict(b) for b in result.content])
    text = "\n".join([t for t in map(block_text, result.content) if t])
    structured = result.structured_content
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    details = {"mcp": True, "server": server, "tool": tool, "structured": structured}
    return ToolResult(text, details, is_error=result.is_error, content=blocks)


def call_json(result: ToolResult) -> dict[str, Any]:
    """``{"isError", "content", "structuredContent"}``: a ``CallToolResult`` in MCP's own
    field names, as ``lemon mcp call --json`` prints it."""
    content = list(result.content) or [{"type": "text", "text": result.text}]
    return {
        "isError": result.is_error,
        "content": [wire_names(b) for b in content],
        "structuredContent": result.details.get("structured"),
    }


def wire_names(data: Any) -> Any:
    """A block dict with MCP's field names (``mimeType``, ``lastModified``, ``_meta``);
    ``_meta`` values are left as they are."""
    if isinstance(data, list):
        return [wire_names(v) for v in data]
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = _WIRE_NAMES.get(str(key), str(key))
        out[name] = value if name == "_meta" else wire_names(value)
    return out


_WIRE_NAMES: dict[str, str] = {
    "mime_type": "mimeType",
    "last_modified": "lastModified",
    "meta": "_meta",
}


def resource_dict(r: types.Resource) -> dict[str, Any]:
    """A listed resource, in MCP's field names."""
    return _drop_none(
        {
            "uri": r.uri,
            "name": r.name,
            "title": r.title,
            "description": r.description or None,
            "mimeType": r.mime_type,
        }
    )


def template_dict(t: types.ResourceTemplate) -> dict[str, Any]:
    """A listed resource template, in MCP's field names."""
    return _drop_none(
        {
            "uriTemplate": t.uri_template,
            "name": t.name,
            "title": t.title,
            "description": t.description or None,
            "mimeType": t.mime_type,
        }
    )


def prompt_dict(p: types.Prompt) -> dict[str, Any]:
    """A listed prompt with its arguments."""
    args = [
        _drop_none({"name": a.name, "description": a.description, "required": bool(a.required)})
        for a in p.arguments or ()
    ]
    return _drop_none(
        {"name": p.name, "title": p.title, "description": p.description, "arguments": args}
    )


def json_result(data: Any, **details: Any) -> ToolResult:
    """A utility result: the JSON text for the model, the data in ``details``."""
    return ToolResult(json.dumps(data, ensure_ascii=False, indent=2), {"mcp": True, **details})


def read_result(result: types.ReadResourceResult, *, server: str, uri: str) -> ToolResult:
    """``resources/read``: each contents item's text, blobs as data blocks."""
    contents = [block_dict(c) for c in result.contents]
    text = "\n".join(contents_text(c) for c in result.contents)
    blocks = tuple({"type": "resource", "resource": c} for c in contents)
    details = {"mcp": True, "server": server, "uri": uri, "contents": contents}
    return ToolResult(text, details, content=blocks)


def prompt_result(result: types.GetPromptResult, *, server: str, name: str) -> ToolResult:
    """``prompts/get``: the description and messages as JSON."""
    data = {
        "description": result.description,
        "messages": [{"role": m.role, "content": block_dict(m.content)} for m in result.messages],
    }
    return json_result(data, server=server, prompt=name, prompt_result=data)


def _decoded_size(b64: str) -> int:
    return len(b64) * 3 // 4 - b64[-2:].count("=") if b64 else 0


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}
