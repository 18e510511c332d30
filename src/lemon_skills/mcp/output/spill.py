"""Oversized tool results: the whole result to a file, its head to the model.

A result whose text is estimated above the server's ``max_result_tokens`` is written to
``<agent dir>/mcp-results/<id>.txt`` (mode 0600; files older than ``RESULT_TTL_S`` are swept
when the next one is written) and the model gets the head, cut at a line end, followed by a
line saying how big the result is, where it was cut, and how to read on: the path, or
``read_result(id, offset)``. Images and binary blobs never become text: a block whose data
alone is over the budget is saved the same way and replaced by a link to its file.
"""

from __future__ import annotations

import base64
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lemon_skills import paths
from lemon_skills.errors import McpToolError
from lemon_skills.tool import CHARS_PER_TOKEN, Tool, ToolContext, ToolResult, estimate_tokens

#: Saved results older than this are deleted when another is saved.
RESULT_TTL_S = 24 * 3600
#: What one ``read_result`` call returns by default.
PAGE_CHARS = 20_000
_WRITE_CHUNK = 1 << 20


def results_dir() -> Path:
    """Where oversized results are saved."""
    return paths.agent_dir() / "mcp-results"


def over_budget(result: ToolResult, budget_tokens: int) -> bool:
    """Whether ``result`` must be cut (a length comparison; no work for small results)."""
    if budget_tokens <= 0:
        return False
    limit = budget_tokens * CHARS_PER_TOKEN
    if len(result.text) > limit:
        return True
    for block in result.content:
        if block.get("type") != "text" and len(_payload(block)) > limit:
            return True
    return False


def spill(result: ToolResult, budget_tokens: int, *, mime: str = "text/plain") -> ToolResult:
    """``result`` cut to ``budget_tokens`` with the rest saved to a file (see module doc)."""
    limit = budget_tokens * CHARS_PER_TOKEN
    directory = results_dir()
    _sweep(directory)
    blocks = [_spill_block(b, limit, directory) for b in result.content]
    text = result.text
    details = dict(result.details)
    if len(text) <= limit:
        return ToolResult(text, details, is_error=result.is_error, content=tuple(blocks))
    rid = _new_id()
    path = _write_text(directory / f"{rid}.txt", text)
    head = _head(text, limit - 400)
    lines = head.count("\n") + 1
    note = (
        f"\n[result cut: {len(text):,} characters (~{estimate_tokens(text):,} tokens)"
        f" of {mime}; shown: the first {len(head):,} characters, to line {lines:,}."
        f" The whole result is in {path}; read on with read_result(id={rid!r},"
        f" offset={len(head)}) or any file reader.]"
    )
    details.update(structured=None, spilled={"id": rid, "path": str(path), "chars": len(text)})
    details["spilled"]["shown"] = len(head)
    others = [b for b in blocks if b.get("type") != "text"]
    content = ({"type": "text", "text": head + note}, *others)
    return ToolResult(head + note, details, is_error=result.is_error, content=content)


def read_result(result_id: str, offset: int = 0, limit: int = PAGE_CHARS) -> str:
    """Characters ``offset`` to ``offset + limit`` of a saved result, with where to go on.

    Raises:
        McpToolError: no saved result has that id (it may have been swept).
    """
    if not result_id.isalnum():
        raise McpToolError(f"not a result id: {result_id!r}")
    path = results_dir() / f"{result_id}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise McpToolError(
            f"no saved result {result_id!r}", hint=f"results are kept {RESULT_TTL_S // 3600} h"
        ) from None
    offset = max(0, offset)
    page = text[offset : offset + max(1, limit)]
    end = offset + len(page)
    tail = f"\n[characters {offset:,}-{end:,} of {len(text):,}"
    tail += f"; next: offset={end}]" if end < len(text) else "; end of result]"
    return page + tail


def _read_result_handler(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    text = read_result(
        str(params["id"]), int(params.get("offset", 0)), int(params.get("limit", PAGE_CHARS))
    )
    return ToolResult(text, {"mcp": True, "result_id": params["id"]})


#: The tool a model pages through a saved result with (add it beside the MCP tools).
read_result_tool = Tool(
    name="read_result",
    description="Read part of a tool result that was too big to show whole, by the id its "
    "summary line gave.",
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The result id from the summary line."},
            "offset": {"type": "integer", "minimum": 0, "description": "First character."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many characters."},
        },
        "required": ["id"],
    },
    handler=_read_result_handler,
    label="Read saved result",
)


def _head(text: str, size: int) -> str:
    head = text[: max(0, size)]
    cut = head.rfind("\n")
    return head[: cut + 1] if cut > size // 2 else head


def _payload(block: Mapping[str, Any]) -> str:
    data = block.get("data")
    if isinstance(data, str):
        return data
    resource = block.get("resource")
    if isinstance(resource, Mapping):
        blob = resource.get("blob")
        return blob if isinstance(blob, str) else ""
    return ""


def _spill_block(block: Mapping[str, Any], limit: int, directory: Path) -> Mapping[str, Any]:
    data = _payload(block)
    if len(data) <= limit:
        return block
    path = directory / f"{_new_id()}.bin"
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        for i in range(0, len(data), _WRITE_CHUNK * 4):
            f.write(base64.b64decode(data[i : i + _WRITE_CHUNK * 4]))
    resource = block.get("resource")
    mime = block.get("mimeType") or block.get("mime_type")
    if isinstance(resource, Mapping):
        mime = resource.get("mimeType") or resource.get("mime_type")
    return {
        "type": "resource_link",
        "uri": path.as_uri(),
        "name": f"{block.get('type')} saved to a file",
        "mime_type": mime or "application/octet-stream",
        "size": path.stat().st_size,
    }


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        # Slices keep the encoded copy small: a 50 MB result is not duplicated in memory.
        for i in range(0, len(text), _WRITE_CHUNK):
            f.write(text[i : i + _WRITE_CHUNK])
    return path


def _new_id() -> str:
    return f"{int(time.time())}{secrets.token_hex(6)}"


def _sweep(directory: Path) -> None:
    cutoff = time.time() - RESULT_TTL_S
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            continue  # another process swept it first
