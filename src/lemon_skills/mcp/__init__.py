"""MCP servers as a tool source: config, connections, naming, filters and ``McpSource``.

Importing this package is cheap; the MCP SDK is imported only when ``McpSource`` (or another
name that needs it) is first used, so ``lemon skill ...`` never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.mcp.catalog.toolsearch import ToolMatch, find_tools
    from lemon_skills.mcp.config.entries import (
        ConfigIssue,
        Filters,
        HttpServer,
        ServerConfig,
        SseServer,
        StdioServer,
        ToolPolicy,
    )
    from lemon_skills.mcp.config.parse import validate_servers as validate_mcp_servers
    from lemon_skills.mcp.config.resolve import ResolvedConfig, configured_server_names, load
    from lemon_skills.mcp.output.spill import read_result_tool
    from lemon_skills.mcp.session.factories import call_approver, oauth_factory, sampling_factory
    from lemon_skills.mcp.source import McpSource, default_source, reset_default_source

_ENTRIES = "lemon_skills.mcp.config.entries"

_LAZY = {
    "ConfigIssue": _ENTRIES,
    "Filters": _ENTRIES,
    "HttpServer": _ENTRIES,
    "ServerConfig": _ENTRIES,
    "SseServer": _ENTRIES,
    "StdioServer": _ENTRIES,
    "ToolPolicy": _ENTRIES,
    "call_approver": "lemon_skills.mcp.session.factories",
    "read_result_tool": "lemon_skills.mcp.output.spill",
    "oauth_factory": "lemon_skills.mcp.session.factories",
    "sampling_factory": "lemon_skills.mcp.session.factories",
    "ResolvedConfig": "lemon_skills.mcp.config.resolve",
    "load": "lemon_skills.mcp.config.resolve",
    "configured_server_names": "lemon_skills.mcp.config.resolve",
    "McpSource": "lemon_skills.mcp.source",
    "default_source": "lemon_skills.mcp.source",
    "reset_default_source": "lemon_skills.mcp.source",
    "find_tools": "lemon_skills.mcp.catalog.toolsearch",
    "ToolMatch": "lemon_skills.mcp.catalog.toolsearch",
    "validate_mcp_servers": "lemon_skills.mcp.config.parse:validate_servers",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
