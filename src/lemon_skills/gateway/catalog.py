"""What the gateway lists, built from ``McpSource``'s catalogue: upstream tools as MCP tool
definitions (annotations kept), the tool-mode decision (``deferred.select``'s rule), and the
namespacing that keeps two servers' resources and prompts apart.

Rebuilt once per catalogue generation; a ``tools/list`` between changes costs a lookup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp import types
from pydantic_core import to_json

from lemon_skills.mcp.catalog.build import ToolSpec
from lemon_skills.mcp.catalog.views import View
from lemon_skills.skills.selection.profiles import Profile
from lemon_skills.tool import Tool
from lemon_skills.tools.deferred import Mode, select

#: ``auto`` decides as deferred loading does, for a context of this many tokens (a host's
#: budget is not known to a server; 200k is the common context size).
DEFAULT_BUDGET = 200_000
#: A namespaced upstream resource: ``mcp+<server>:<the server's own uri>``.
_URI = re.compile(r"^mcp\+([a-z0-9.-]+):(.*)$", re.DOTALL)
_SLUG = re.compile(r"[^a-z0-9.-]+")


@dataclass(frozen=True, slots=True)
class Listing:
    """One catalogue generation as the gateway serves it."""

    generation: int
    mode: str
    #: Every routable upstream tool, by model-facing name.
    tools: Mapping[str, types.Tool]
    specs: Mapping[str, ToolSpec]
    #: Tools every client sees in ``search`` mode (``always_load``).
    pinned: tuple[str, ...]
    #: The source's ``Tool`` objects of the routable tools (what ``tool_search`` ranks).
    objects: Mapping[str, Tool] = field(default_factory=dict)
    #: Utility specs (resource reads, prompt gets) by (server, kind).
    utilities: Mapping[tuple[str, str], ToolSpec] = field(default_factory=dict)
    servers: Mapping[str, str] = field(default_factory=dict)
    #: The ``McpSource`` the listing came from (calls go back to it).
    source: Any = None
    #: Each tool's wire form and its JSON, made on first listing (see ``gateway/wire``).
    wire: dict[str, tuple[dict[str, Any], bytes]] = field(default_factory=dict)

    def wire_tool(self, name: str) -> tuple[dict[str, Any], bytes]:
        """``name``'s definition as sent and its JSON, made once per generation."""
        hit = self.wire.get(name)
        if hit is None:
            form = dump(self.tools[name])
            hit = self.wire[name] = (form, to_json(form))
        return hit


def dump(tool: types.Tool) -> dict[str, Any]:
    """A tool definition in its wire form."""
    out: dict[str, Any] = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    return out


def build(
    view: View,
    tools: list[Tool],
    mode: Mode,
    profile: Profile | None,
    budget: int,
    source: Any = None,
) -> Listing:
    """The listing of ``view`` (``tools``: the source's ``Tool`` objects of the same view)."""
    offered = [s for s in view.specs if admits(profile, s.server)]
    names = {s.name for s in offered if s.kind == "tool"}
    mine = [t for t in tools if t.name in names]
    pinned = [s.name for s in offered if s.kind == "tool" and s.always_load]
    chosen = select(
        mine,
        deferrable=[t.name for t in mine],
        pinned=pinned,
        rank=lambda q, k: [],
        request=None,
        budget=budget,
        mode=mode,
    )
    raw = {(h.key, t.name): t for h in view.handles for t in h.listing.tools}
    defs: dict[str, types.Tool] = {}
    specs: dict[str, ToolSpec] = {}
    utilities: dict[tuple[str, str], ToolSpec] = {}
    for spec in offered:
        if spec.kind != "tool":
            utilities[(spec.server, spec.kind)] = spec
            continue
        specs[spec.name] = spec
        defs[spec.name] = _definition(spec, raw.get((spec.key, spec.target)))
    return Listing(
        generation=view.generation,
        mode=chosen.mode,
        tools=defs,
        specs=specs,
        pinned=tuple(pinned),
        objects={t.name: t for t in mine},
        utilities=utilities,
        servers={slug(h.name): h.name for h in view.handles if admits(profile, h.name)},
        source=source,
    )


def admits(profile: Profile | None, server: str) -> bool:
    """Whether an agent's profile offers ``server`` (its key is ``mcp:<server>``)."""
    return profile is None or profile.admits(f"mcp:{server}")


def _definition(spec: ToolSpec, raw: types.Tool | None) -> types.Tool:
    # No outputSchema: a host must then get structured content with every result, and a
    # result cut to its budget cannot carry it whole.
    return types.Tool(
        name=spec.name,
        title=spec.title or None,
        description=spec.description,
        input_schema=dict(spec.input_schema),
        annotations=raw.annotations if raw is not None else None,
    )


def slug(server: str) -> str:
    """A server name as a URI scheme part."""
    return _SLUG.sub("-", server.lower()).strip("-") or "server"


def wrap_uri(server: str, uri: str) -> str:
    """``uri`` of ``server`` as the gateway lists it."""
    return f"mcp+{slug(server)}:{uri}"


def unwrap_uri(uri: str) -> tuple[str, str] | None:
    """``(server slug, the server's uri)`` of a namespaced uri, else None."""
    m = _URI.match(uri)
    return (m.group(1), m.group(2)) if m else None


def prompt_name(server: str, name: str) -> str:
    """An upstream prompt's name as the gateway lists it."""
    return f"mcp_{slug(server).replace('-', '_').replace('.', '_')}_{name}"


def resource(server: str, row: Mapping[str, Any]) -> types.Resource | types.ResourceTemplate:
    """A listed upstream resource (or template) row, namespaced."""
    if "uriTemplate" in row:
        return types.ResourceTemplate(
            uri_template=wrap_uri(server, row["uriTemplate"]),
            name=row["name"],
            title=row.get("title"),
            description=row.get("description"),
            mime_type=row.get("mimeType"),
        )
    return types.Resource(
        uri=wrap_uri(server, row["uri"]),
        name=row["name"],
        title=row.get("title"),
        description=row.get("description"),
        mime_type=row.get("mimeType"),
    )


def prompt(server: str, row: Mapping[str, Any]) -> types.Prompt:
    """A listed upstream prompt row, namespaced."""
    args = [
        types.PromptArgument(
            name=a["name"], description=a.get("description"), required=a.get("required")
        )
        for a in row.get("arguments") or ()
    ]
    return types.Prompt(
        name=prompt_name(server, row["name"]),
        title=row.get("title"),
        description=row.get("description"),
        arguments=args or None,
    )
