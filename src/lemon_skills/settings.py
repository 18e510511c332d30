"""Settings a host sets in code, kept in the default context.

``configure()`` is the programmatic counterpart of the config files: the host application
calls it once (``lemon_skills.configure(mcp_servers=[...])``) and every default ``McpSource``
created afterwards sees it. Files and environment variables are read at call time elsewhere;
nothing here touches disk, and importing it never imports the MCP SDK.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lemon_skills.context import current

#: The names of the MCP servers configured for a directory (a skill's ``requires.mcp_servers``
#: is checked against them). Injected, so the skills core never imports the MCP layer.
McpServerNamesFn = Callable[[Path | None], Collection[str]]
#: Given an MCP entry, a transport to use instead of its own (``None``: its own); typed loosely
#: so this module never imports the MCP layer (see ``lemon_skills.mcp.session.lifecycle``).
McpTransportFn = Callable[[Any], Any]

_UNSET: Any = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What ``configure()`` set.

    ``mcp_servers`` holds the entries as given (dicts, tuples or records); ``None`` means none
    were configured in code. ``generation`` changes on every ``configure()`` so caches notice.
    """

    mcp_servers: tuple[object, ...] | None = None
    mcp_disabled: bool = False
    mcp_cache_ttl_ms: int = 300_000
    mcp_refresh_interval_ms: int = 60_000
    mcp_server_names: McpServerNamesFn | None = None
    mcp_transport_factory: McpTransportFn | None = None
    #: The shared state database (``postgresql://...``); ``LEMON_DATABASE_URL`` wins over it.
    database_url: str | None = None
    generation: int = 0


#: Generations only grow, across contexts too, so a cache keyed on one never sees it again.
_generations = itertools.count(1)


def _fresh() -> Settings:
    return Settings(generation=next(_generations))


def settings() -> Settings:
    """The settings of the context in use."""
    return current().service(Settings, _fresh)


def configure(
    *,
    mcp_servers: Sequence[object] | None = _UNSET,
    mcp_disabled: bool = _UNSET,
    mcp_cache_ttl_ms: int = _UNSET,
    mcp_refresh_interval_ms: int = _UNSET,
    mcp_server_names: McpServerNamesFn | None = _UNSET,
    mcp_transport_factory: McpTransportFn | None = _UNSET,
    database_url: str | None = _UNSET,
) -> Settings:
    """Set process-wide options; omitted keywords keep their value.

    Example::

        lemon_skills.configure(mcp_servers=[
            {"name": "git", "command": "uvx", "args": ["mcp-server-git"]},
            ("http", "http://127.0.0.1:4000/mcp"),
        ])

    Entries are validated lazily: invalid ones are reported by ``McpSource.status()`` and
    ``lemon_skills.mcp.validate_mcp_servers`` and skipped, never raised here.
    ``mcp_server_names`` (e.g. ``lemon_skills.mcp.configured_server_names``) lets skill
    status and prompts check the MCP servers skills require; without it that is not checked.
    ``mcp_transport_factory(entry)`` may return a transport to use instead of the entry's own,
    e.g. the SDK's ``InMemoryTransport(server)`` for a server running in this process.
    ``database_url`` keeps approvals, tool pins, usage and events in PostgreSQL (see
    ``lemon_skills.state``).
    """
    changes: dict[str, Any] = {}
    if mcp_servers is not _UNSET:
        changes["mcp_servers"] = None if mcp_servers is None else tuple(mcp_servers)
    if mcp_disabled is not _UNSET:
        changes["mcp_disabled"] = bool(mcp_disabled)
    if mcp_server_names is not _UNSET:
        changes["mcp_server_names"] = mcp_server_names
    if mcp_transport_factory is not _UNSET:
        changes["mcp_transport_factory"] = mcp_transport_factory
    if database_url is not _UNSET:
        changes["database_url"] = database_url or None
    for key, value in (
        ("mcp_cache_ttl_ms", mcp_cache_ttl_ms),
        ("mcp_refresh_interval_ms", mcp_refresh_interval_ms),
    ):
        if value is not _UNSET:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{key} must be a positive integer")
            changes[key] = value
    ctx = current()
    with ctx.lock:
        new = replace(settings(), generation=next(_generations), **changes)
        ctx.put(Settings, new)
        return new


def mcp_server_names(cwd: Path | None) -> frozenset[str] | None:
    """The configured MCP server names for ``cwd``; None when no provider is configured."""
    fn = settings().mcp_server_names
    return None if fn is None else frozenset(fn(cwd))


def reset() -> None:
    """Back to defaults (for embedding hosts that reconfigure from scratch)."""
    current().put(Settings, _fresh())
