"""The model-facing catalogue of a set of servers: names, filters, utilities (pure).

Input: each server's name, handle key, filters and last listing. Output: one ``ToolSpec`` per
exposed tool or utility, uniquely named, plus the naming conflicts. Utilities
(``resources_list``, ``resource_read``, ``prompts_list``, ``prompt_get``) are offered for
servers that declare the resources / prompts capability and whose listing still has a resource
(or template) / prompt once the filters are applied: a utility that could only answer "blocked"
or "nothing" is noise for the model. A server that announces a list change is re-listed and
the catalogue rebuilt, so the utilities appear or go with its items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from lemon_skills.mcp.catalog.filters import (
    needs_approval,
    prompt_allowed,
    resource_allowed,
    tool_allowed,
)
from lemon_skills.mcp.catalog.naming import NameConflict, NameRequest, assign_tool_names
from lemon_skills.mcp.config.entries import Filters, ToolPolicy
from lemon_skills.mcp.session.handle import Listing
from lemon_skills.text.descriptions import without_hidden

SpecKind = Literal["tool", "resources_list", "resource_read", "prompts_list", "prompt_get"]

_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}
UTILITIES: dict[SpecKind, tuple[str, Mapping[str, Any]]] = {
    "resources_list": ("List the resources of MCP server {server}.", _EMPTY_SCHEMA),
    "resource_read": (
        "Read a resource of MCP server {server} by URI.",
        {
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource URI."}},
            "required": ["uri"],
        },
    ),
    "prompts_list": ("List the prompts of MCP server {server}.", _EMPTY_SCHEMA),
    "prompt_get": (
        "Get a prompt of MCP server {server} by name.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The prompt name."},
                "arguments": {
                    "type": "object",
                    "description": "Prompt arguments (string values).",
                },
            },
            "required": ["name"],
        },
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogEntry:
    """One server's contribution: who it is and what it listed."""

    server: str
    key: str
    filters: Filters
    listing: Listing
    #: Tools held back by pinning (changed since pinned, or a suspicious description).
    withheld: frozenset[str] = frozenset()
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    #: Tool names (as listed) always sent to the model; ``"*"`` pins every tool.
    always_load: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """One model-facing tool: where it goes (``key``) and what it calls there (``target``)."""

    name: str
    server: str
    key: str
    kind: SpecKind
    target: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    #: Sent to the model even when deferred loading holds other MCP tools back.
    always_load: bool = False
    #: A call waits for an operator (the server's ``approve`` policy and the annotations).
    approve: bool = False

    @property
    def label(self) -> str:
        """``MCP <original name>`` (``MCP resource_read`` for utilities)."""
        return f"MCP {self.target}"

    def to_dict(self) -> dict[str, Any]:
        """The ``lemon mcp tools --json`` row."""
        return {
            "name": self.name,
            "server": self.server,
            "tool": self.target,
            "kind": self.kind,
            "description": self.description,
            "input_schema": dict(self.input_schema),
            "always_load": self.always_load,
            "needs_approval": self.approve,
        }


def build(entries: Sequence[CatalogEntry]) -> tuple[list[ToolSpec], list[NameConflict]]:
    """Every exposed tool and utility of ``entries``, sorted by name."""
    drafts: list[tuple[NameRequest, ToolSpec]] = []
    for entry in entries:
        drafts.extend(_server_drafts(entry))
    names, conflicts = assign_tool_names(req for req, _ in drafts)
    specs = [replace(spec, name=names[req]) for req, spec in drafts]
    return sorted(specs, key=lambda s: s.name), conflicts


def _server_drafts(entry: CatalogEntry) -> list[tuple[NameRequest, ToolSpec]]:
    out: list[tuple[NameRequest, ToolSpec]] = []
    for tool in entry.listing.tools:
        if not tool_allowed(entry.filters, tool.name) or tool.name in entry.withheld:
            continue
        spec = ToolSpec(
            name="",
            server=entry.server,
            key=entry.key,
            kind="tool",
            target=tool.name,
            description=without_hidden(tool.description or ""),
            input_schema=_schema(tool.input_schema),
            title=tool.title or "",
            always_load="*" in entry.always_load or tool.name in entry.always_load,
            approve=needs_approval(entry.policy.approve_mode(tool.name), tool.annotations),
        )
        out.append((NameRequest(server=entry.server, item=tool.name), spec))
    for kind in _utility_kinds(entry):
        text, schema = UTILITIES[kind]
        spec = ToolSpec(
            name="",
            server=entry.server,
            key=entry.key,
            kind=kind,
            target=kind,
            description=text.format(server=entry.server),
            input_schema=schema,
        )
        out.append((NameRequest(server=entry.server, item=kind, utility=True), spec))
    return out


def _utility_kinds(entry: CatalogEntry) -> list[SpecKind]:
    """The utilities that could return something: the server declares the capability and its
    listing, after filters, still has an item (or failed, so nothing is known to be empty)."""
    lst, f = entry.listing, entry.filters
    kinds: list[SpecKind] = []
    if lst.capabilities.get("resources") and (
        lst.failed("resources")
        or any(resource_allowed(f, r.uri, r.name) for r in lst.resources)
        or any(resource_allowed(f, t.uri_template, t.name) for t in lst.templates)
    ):
        kinds += ["resources_list", "resource_read"]
    if lst.capabilities.get("prompts") and (
        lst.failed("prompts") or any(prompt_allowed(f, p.name) for p in lst.prompts)
    ):
        kinds += ["prompts_list", "prompt_get"]
    return kinds


def _schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    out = dict(schema or {})
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out
