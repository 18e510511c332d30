"""Process-wide settings a host sets in code.

``configure()`` is the programmatic counterpart of the config files: the host application
calls it once (``lemon_skills.configure(mcp_servers=[...])``) and every default ``McpSource``
created afterwards sees it. Files and environment variables are read at call time elsewhere;
nothing here touches disk, and importing it never imports the MCP SDK.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

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
    generation: int = 0


_lock = threading.Lock()
_settings = Settings()


def settings() -> Settings:
    """The current settings."""
    return _settings


def configure(
    *,
    mcp_servers: Sequence[object] | None = _UNSET,
    mcp_disabled: bool = _UNSET,
    mcp_cache_ttl_ms: int = _UNSET,
    mcp_refresh_interval_ms: int = _UNSET,
) -> Settings:
    """Set process-wide options; omitted keywords keep their value.

    Example::

        lemon_skills.configure(mcp_servers=[
            {"name": "git", "command": "uvx", "args": ["mcp-server-git"]},
            ("http", "http://127.0.0.1:4000/mcp"),
        ])

    Entries are validated lazily: invalid ones are reported by ``McpSource.status()`` and
    ``lemon_skills.mcp.validate_mcp_servers`` and skipped, never raised here.
    """
    global _settings
    changes: dict[str, Any] = {}
    if mcp_servers is not _UNSET:
        changes["mcp_servers"] = None if mcp_servers is None else tuple(mcp_servers)
    if mcp_disabled is not _UNSET:
        changes["mcp_disabled"] = bool(mcp_disabled)
    for key, value in (
        ("mcp_cache_ttl_ms", mcp_cache_ttl_ms),
        ("mcp_refresh_interval_ms", mcp_refresh_interval_ms),
    ):
        if value is not _UNSET:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{key} must be a positive integer")
            changes[key] = value
    with _lock:
        _settings = replace(_settings, generation=_settings.generation + 1, **changes)
        return _settings


def reset() -> None:
    """Back to defaults (for tests and embedding hosts that reconfigure from scratch)."""
    global _settings
    with _lock:
        _settings = Settings(generation=_settings.generation + 1)
