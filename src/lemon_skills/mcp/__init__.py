"""MCP servers as a tool source: config, connections, naming, filters and ``McpSource``.

Importing this package is cheap; the MCP SDK is imported only when ``McpSource`` (or another
name that needs it) is first used, so ``lemon skill ...`` never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy_attrs import lazy_getattr

if TYPE_CHECKING:
    from .config import ConfigIssue, Filters, HttpServer, ServerConfig, SseServer, StdioServer
    from .factories import oauth_factory, sampling_factory
    from .resolve import ResolvedConfig, load
    from .source import McpSource, default_source, reset_default_source

_LAZY = {
    "ConfigIssue": ".config",
    "Filters": ".config",
    "HttpServer": ".config",
    "ServerConfig": ".config",
    "SseServer": ".config",
    "StdioServer": ".config",
    "oauth_factory": ".factories",
    "sampling_factory": ".factories",
    "ResolvedConfig": ".resolve",
    "load": ".resolve",
    "McpSource": ".source",
    "default_source": ".source",
    "reset_default_source": ".source",
}

__all__ = [
    "ConfigIssue",
    "Filters",
    "HttpServer",
    "McpSource",
    "ResolvedConfig",
    "ServerConfig",
    "SseServer",
    "StdioServer",
    "default_source",
    "load",
    "oauth_factory",
    "reset_default_source",
    "sampling_factory",
]


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
