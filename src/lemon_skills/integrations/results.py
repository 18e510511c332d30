"""A ``ToolResult`` in the parts every framework's tool return has: text, images, an error flag.

The text is what the model reads, spill notices included (an oversized MCP result was already
cut to its head plus a line saying where the rest is, see ``mcp/spill``). Images come out as
bytes with their media type for frameworks that have image content; the text keeps its
``[image: ...]`` line either way, so a framework without images still tells the model one came.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lemon_skills.tool import ToolResult


@dataclass(frozen=True, slots=True)
class Image:
    """One image block of a result."""

    data: bytes
    media_type: str


@dataclass(frozen=True, slots=True)
class Reply:
    """What a tool call gives the model, in framework-neutral parts."""

    text: str
    images: tuple[Image, ...] = ()
    is_error: bool = False


def reply(result: ToolResult) -> Reply:
    """The parts of ``result``; an error keeps its text (the framework reports it as a tool
    error, never as an exception that ends the run)."""
    images = tuple(i for i in map(_image, result.content) if i is not None)
    return Reply(result.text or ("(no output)" if not images else ""), images, result.is_error)


def _image(block: Mapping[str, Any]) -> Image | None:
    if block.get("type") != "image" or not isinstance(block.get("data"), str):
        return None
    try:
        data = base64.b64decode(block["data"], validate=True)
    except (binascii.Error, ValueError):
        return None  # a malformed block stays the text line the model already reads
    media = block.get("mime_type") or block.get("mimeType") or "image/png"
    return Image(data, str(media))
