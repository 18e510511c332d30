"""What a server offers besides tools, read on request: its resources, prompts and served skills.

Listings and reads go through the server's filters (a blocked resource or prompt is refused
before anything is sent) and the manager's request path; results become ``ToolResult`` rows or
plain dicts. The model reaches them through the catalogue's utility tools (``calls``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.shared.exceptions import MCPError

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.catalog.filters import prompt_allowed, resource_allowed
from lemon_skills.mcp.output.results import (
    prompt_dict,
    prompt_result,
    read_result,
    resource_dict,
    template_dict,
)
from lemon_skills.mcp.output.spill import over_budget, spill
from lemon_skills.mcp.session.handle import ServerHandle
from lemon_skills.mcp.session.manager import McpManager
from lemon_skills.mcp.skills.client import CacheHint, WireSkill, list_skills_hinted
from lemon_skills.mcp.skills.client import read_bytes as read_skill_bytes
from lemon_skills.tool import ToolResult


async def resources(manager: McpManager, h: ServerHandle) -> list[dict[str, Any]]:
    """The server's resources and templates that pass its filters (live listing)."""

    async def fetch(c: Any) -> tuple[Any, list[Any]]:
        listed = await c.list_resources()
        try:
            templates = (await c.list_resource_templates()).resource_templates
        except MCPError:  # templates are optional; a server may not implement the method
            templates = []
        return listed, templates

    listed, templates = await manager.request(h, fetch, what="resources/list")
    f = h.config.filters
    out = [resource_dict(r) for r in listed.resources if resource_allowed(f, r.uri, r.name)]
    out += [template_dict(t) for t in templates if resource_allowed(f, t.uri_template, t.name)]
    return out


async def skills(
    manager: McpManager, h: ServerHandle, limit: int
) -> tuple[list[WireSkill], list[str], CacheHint]:
    """The skills the server lists (SEP-2640), metadata only, and its cache hints."""

    async def fetch(c: Any) -> tuple[list[WireSkill], list[str], CacheHint]:
        return await list_skills_hinted(c.session, limit=limit)

    return await manager.request(h, fetch, what="skills/list")


async def read_bytes(manager: McpManager, h: ServerHandle, uri: str, limit: int) -> bytes:
    """One resource of the server as bytes (at most ``limit``)."""

    async def read(c: Any) -> bytes:
        return await read_skill_bytes(c.session, uri, limit)

    return await manager.request(h, read, what=f"resource {uri!r}")


async def prompts(manager: McpManager, h: ServerHandle) -> list[dict[str, Any]]:
    """The server's prompts that pass its filters (live listing)."""

    async def fetch(c: Any) -> Any:
        return await c.list_prompts()

    listed = await manager.request(h, fetch, what="prompts/list")
    f = h.config.filters
    return [prompt_dict(p) for p in listed.prompts if prompt_allowed(f, p.name)]


async def read(manager: McpManager, h: ServerHandle, server: str, uri: str) -> ToolResult:
    """Resource ``uri`` as a tool result, refused when the server's filters block it."""
    name = await _resource_name(manager, h, uri)
    if not resource_allowed(h.config.filters, uri, name):
        raise McpToolError(f"resource {uri!r} is blocked by the server's filters", server=server)

    async def read(c: Any) -> Any:
        return await c.read_resource(uri)

    result = await manager.request(h, read, what=f"resource {uri!r}")
    out = read_result(result, server=server, uri=uri)
    budget = h.config.policy.max_result_tokens
    return spill(out, budget) if over_budget(out, budget) else out


async def _resource_name(manager: McpManager, h: ServerHandle, uri: str) -> str | None:
    for r in h.listing.resources:
        if r.uri == uri:
            return r.name
    f = h.config.filters
    if not f.allow_resources and not f.block_resources:
        return None
    listed = await resources(manager, h)
    return next((r["name"] for r in listed if r.get("uri") == uri), None)


async def prompt(
    manager: McpManager, h: ServerHandle, server: str, name: str, args: dict[str, Any]
) -> ToolResult:
    """Prompt ``name`` rendered with ``args["arguments"]``, refused when filtered out."""
    if not prompt_allowed(h.config.filters, name):
        raise McpToolError(f"prompt {name!r} is blocked by the server's filters", server=server)
    arguments = args.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise McpToolError("arguments must be an object", server=server)
    values = {str(k): v if isinstance(v, str) else _json(v) for k, v in arguments.items()}

    async def get(c: Any) -> Any:
        return await c.get_prompt(name, values)

    result = await manager.request(h, get, what=f"prompt {name!r}")
    return prompt_result(result, server=server, name=name)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
