"""Exact allow/block filters for tools, resources and prompts (pure).

An item is allowed when the allow list is empty or names it, and the block list does not. An
item may have several names: a resource is known by its ``uri`` and its ``name``, and the same
rule is applied when it is listed and when it is read, so an allow list naming a resource by
``name`` lets the model both see and read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcp import types

from lemon_skills.mcp.config.entries import Approve, Filters


def allowed(names: Iterable[str | None], allow: Sequence[str], block: Sequence[str]) -> bool:
    """The filter rule over every name the item is known by."""
    known = {n for n in names if n}
    if block and known.intersection(block):
        return False
    return not allow or bool(known.intersection(allow))


def tool_allowed(filters: Filters, tool: str) -> bool:
    """Whether the server's tool ``tool`` may be exposed."""
    return allowed([tool], filters.allow_tools, filters.block_tools)


def resource_allowed(filters: Filters, uri: str, name: str | None = None) -> bool:
    """Whether the resource (by uri and, when known, name) may be listed or read."""
    return allowed([uri, name], filters.allow_resources, filters.block_resources)


def prompt_allowed(filters: Filters, prompt: str) -> bool:
    """Whether the prompt may be listed or fetched."""
    return allowed([prompt], filters.allow_prompts, filters.block_prompts)


def needs_approval(mode: Approve, annotations: types.ToolAnnotations | None) -> bool:
    """Whether a call waits for an operator under approval ``mode``.

    ``destructive`` spares only tools that say they change nothing (``readOnlyHint``) or that
    only add, locally (``destructiveHint: false`` and ``openWorldHint: false``). The MCP
    defaults of a missing hint are destructive and open-world, so a tool without annotations
    needs approval: the server did not say it is safe.
    """
    if mode != "destructive":
        return mode == "always"
    if annotations is None:
        return True
    if annotations.read_only_hint:
        return False
    return not (annotations.destructive_hint is False and annotations.open_world_hint is False)
