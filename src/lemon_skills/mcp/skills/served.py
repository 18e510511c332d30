"""A source's served skills (SEP-2640) for one directory: which servers' skills are on, their
listings and generation, and reads of their files. Verifying what they serve is the skills
layer's work; nothing here trusts a byte."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.catalog import reads
from lemon_skills.mcp.catalog.views import Views
from lemon_skills.mcp.config import resolve
from lemon_skills.mcp.session.runtime import Runtime
from lemon_skills.mcp.skills.client import NO_HINT, CacheHint, WireSkill
from lemon_skills.paths import PathArg

#: ``(server, skills, problems, cache hints)`` for one server.
Listing = tuple[str, list[WireSkill], list[str], CacheHint]


class ServedSkills:
    """The served skills of an ``McpSource``'s servers (``McpSource.skills``)."""

    def __init__(
        self,
        runtime: Runtime,
        where: Callable[[PathArg], Path],
        servers: Sequence[object] | None,
        *,
        include_config: bool,
        disabled: bool | None,
    ) -> None:
        self._rt = runtime
        self._dir = where
        self._servers = servers
        self._include_config = include_config
        self._disabled = disabled
        self._cache: dict[Path, tuple[object, list[str]]] = {}

    def servers(self, cwd: PathArg, switches: Mapping[str, bool] | None = None) -> list[str]:
        """Servers of ``cwd`` whose skills are on (``resolve.skill_servers``: the user's
        ``<server>:*`` switches, else the entries). Reads config only; nothing is started."""
        where = self._dir(cwd)
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

    def generation(self, cwd: PathArg, servers: Collection[str]) -> tuple[object, ...]:
        """Changes when one of ``servers`` reconnected or said its resources changed."""
        where = self._dir(cwd)
        return self._rt.run(lambda: _generation(self._rt.need_core(), where, servers))

    def listings(self, cwd: PathArg, servers: Collection[str], *, limit: int) -> list[Listing]:
        """``(server, skills, problems, cache hints)`` for each of ``servers`` (connecting
        only those)."""
        where = self._dir(cwd)
        return self._rt.run(lambda: _listings(self._rt.need_core(), where, servers, limit))

    def read(self, cwd: PathArg, server: str, uri: str, *, limit: int) -> bytes:
        """Resource ``uri`` of ``server`` as bytes (the caller verifies it).

        Raises:
            McpError: the server is unknown or down, or the read failed.
        """
        where = self._dir(cwd)
        return self._rt.run(lambda: _read(self._rt.need_core(), where, server, uri, limit))


async def _generation(core: Views, where: Path, servers: Collection[str]) -> tuple[object, ...]:
    view = core.view(where)
    return tuple((h.name, id(h.conn), h.skills_version) for h in view.handles if h.name in servers)


async def _listings(
    core: Views, where: Path, servers: Collection[str], limit: int
) -> list[Listing]:
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


async def _read(core: Views, where: Path, server: str, uri: str, limit: int) -> bytes:
    view = await core.discover(where, only=[server])
    for h in view.handles:
        if h.name == server:
            try:
                return await reads.read_bytes(core.manager, h, uri, limit)
            except ValueError as exc:
                raise McpToolError(str(exc), server=server) from None
    raise McpToolError(f"no MCP server {server!r} here", server=server)
