"""What a listing (tools, resources, prompts) shows for one directory: the rows of the servers
that answered, and for every other server why it is missing.

A listing never fails because one server did: a server that could not start, dropped its
connection or refused the listing request becomes a ``ServerProblem`` and the others are listed.
Only asking for a server that is not configured at all is an error (``McpError``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lemon_skills.errors import McpError, McpToolError
from lemon_skills.mcp.catalog import reads
from lemon_skills.mcp.config.entries import ServerConfig
from lemon_skills.mcp.config.resolve import ResolvedConfig, server_called

if TYPE_CHECKING:
    from lemon_skills.mcp.catalog.views import View, Views
    from lemon_skills.mcp.session.handle import ServerHandle
    from lemon_skills.mcp.session.lifecycle import ProgressFn

ListingKind = Literal["tools", "resources", "prompts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerProblem:
    """A server whose items are missing from a listing: its state and the reason."""

    server: str
    state: str
    error: str

    def to_dict(self) -> dict[str, Any]:
        """JSON view (``server``, ``state``, ``error``)."""
        return {"server": self.server, "state": self.state, "error": self.error}


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """The rows of one listing, the servers that could not contribute, and why nothing may
    apply at all (``off_reason``: MCP is off here, or the requested server is disabled)."""

    kind: ListingKind
    rows: tuple[dict[str, Any], ...] = ()
    problems: tuple[ServerProblem, ...] = ()
    off_reason: str | None = None


def require_server(config: ResolvedConfig, name: str) -> ServerConfig:
    """The configured server (enabled or not) of ``config`` called ``name``.

    Raises:
        McpError: no such server; the hint names the closest match and the known servers.
    """
    found = server_called(config, name)
    if found is not None:
        return found
    known = sorted(s.name for s in config.servers if s.name)
    if not known:
        hint = "no MCP servers are configured here (see `lemon mcp --help`)"
    else:
        close = difflib.get_close_matches(name, known, n=1)
        hint = (
            (f"did you mean {close[0]!r}? " if close else "") + "known servers: " + ", ".join(known)
        )
    raise McpError(f"unknown MCP server {name!r}", hint=hint)


def off_reason(config: ResolvedConfig, server: str | None) -> str | None:
    """Why nothing is listed whatever the servers do, if anything."""
    if not config.enabled:
        return f"MCP is off here: {config.disabled_reason}"
    for s in config.servers:
        if server is not None and s.name == server and not s.enabled:
            return f'MCP server {server!r} is disabled in its config ("enabled": false)'
    return None


def down(h: ServerHandle) -> ServerProblem | None:
    """The problem of a server that is not connected, else ``None``."""
    if h.connected:
        return None
    state = "failed" if h.state == "connected" else h.state
    reason = h.last_error or ("still starting" if state == "connecting" else "not connected")
    return ServerProblem(server=h.name, state=state, error=reason)


async def directory_report(
    core: Views,
    where: Path,
    kind: ListingKind,
    server: str | None,
    progress: ProgressFn | None,
    *,
    refresh: bool,
) -> Report:
    """The report of ``kind`` for ``where`` (or only ``server``), brought up to date first;
    ``refresh``: also refresh the expired views (nothing else does between calls).

    Raises:
        McpError: ``server`` names no configured server.
    """
    if server is not None:
        require_server(core.view(where).config, server)
    if refresh and server is None:
        await core.refresh_expired()
    only = None if server is None else (server,)
    view = await core.discover(where, progress=progress, only=only)
    return await collect(core, view, kind, server)


async def collect(core: Views, view: View, kind: ListingKind, server: str | None) -> Report:
    """The report of ``kind`` for an up-to-date ``view`` (``server`` already checked)."""
    handles = [h for h in view.handles if server is None or h.name == server]
    problems = [p for h in handles if (p := down(h)) is not None]
    rows: list[dict[str, Any]] = []
    if kind == "tools":
        keys = {h.key for h in handles}
        rows = [s.to_dict() for s in view.specs if s.key in keys]
    else:
        for h in handles:
            if not h.connected or not h.listing.capabilities.get(kind):
                continue
            try:
                read = reads.resources if kind == "resources" else reads.prompts
                listed = await read(core.manager, h)
            except McpToolError as exc:
                reason = str(exc).removeprefix(f"MCP server {h.name!r}: ")
                problems.append(ServerProblem(server=h.name, state="error", error=reason))
                continue
            rows.extend({"server": h.name, **row} for row in listed)
    return Report(
        kind=kind,
        rows=tuple(rows),
        problems=tuple(problems),
        off_reason=off_reason(view.config, server),
    )
