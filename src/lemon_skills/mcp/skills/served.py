"""A source's served skills (SEP-2640) for one directory: which servers' skills are on, their
listings and generation, and reads of their files. Verifying what they serve is the skills
layer's work; nothing here trusts a byte."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.catalog import reads
from lemon_skills.mcp.catalog.views import Views
from lemon_skills.mcp.config import resolve
from lemon_skills.mcp.skills.client import NO_HINT, CacheHint, WireSkill

#: ``(server, skills, problems, cache hints)`` for one server.
Listing = tuple[str, list[WireSkill], list[str], CacheHint]


class SkillServers:
    """The servers of a directory whose skills are on, from config alone (cached per config)."""

    def __init__(
        self, servers: Sequence[object] | None, *, include_config: bool, disabled: bool | None
    ) -> None:
        self._servers = servers
        self._include_config = include_config
        self._disabled = disabled
        self._cache: dict[Path, tuple[object, list[str]]] = {}

    def of(self, where: Path, switches: Mapping[str, bool] | None) -> list[str]:
        """``resolve.skill_servers`` of ``where``: the user's ``<server>:*`` switches, else the
        entries. Reads config only; nothing is started."""
        fp = resolve.fingerprint(where, self._servers, include_config=self._include_config)
        key = (where, fp, tuple(sorted((switches or {}).items())))
        hit = self._cache.get(where)
        if hit is not None and hit[0] == key:
            return hit[1]
        config = resolve.load(
            where,
            servers=self._servers,
            include_config=self._include_config,
            disabled=self._disabled,
        )
        names = resolve.skill_servers(config, switches)
        self._cache[where] = (key, names)
        return names


async def generation(core: Views, where: Path, servers: Collection[str]) -> tuple[object, ...]:
    """Changes when one of ``servers`` reconnected or said its resources changed."""
    view = core.view(where)
    return tuple((h.name, id(h.conn), h.skills_version) for h in view.handles if h.name in servers)


async def listings(core: Views, where: Path, servers: Collection[str], limit: int) -> list[Listing]:
    """The listing of each of ``servers`` (connecting only those); a server that is down or
    refuses the listing gets its problem instead."""
    view = await core.discover(where, only=list(servers))
    out: list[Listing] = []
    for h in view.handles:
        if h.name not in servers:
            continue
        if not h.connected:
            out.append((h.name, [], [f"server is not connected: {h.last_error}"], NO_HINT))
            continue
        try:
            skills, problems, hint = await reads.skills(core.manager, h, limit)
        except McpToolError as exc:
            out.append((h.name, [], [str(exc)], NO_HINT))
            continue
        out.append((h.name, skills, problems, hint))
    return out


async def read(core: Views, where: Path, server: str, uri: str, limit: int) -> bytes:
    """Resource ``uri`` of ``server`` as bytes (the caller verifies it).

    Raises:
        McpToolError: the server is unknown or down, or the read failed.
    """
    view = await core.discover(where, only=[server])
    for h in view.handles:
        if h.name == server:
            try:
                return await reads.read_bytes(core.manager, h, uri, limit)
            except ValueError as exc:
                raise McpToolError(str(exc), server=server) from None
    raise McpToolError(f"no MCP server {server!r} here", server=server)
