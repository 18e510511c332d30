"""OAuth for HTTP MCP servers: the provider over the SDK's, its options, token cache, metadata
discovery, flows, guards, the loopback redirect listener and auth-failure diagnosis.

``build_auth`` is importable from here, as documented; importing any submodule stays cheap
because the provider (and with it the SDK) is loaded only when that name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.mcp.oauth.provider import LemonOAuthProvider, build_auth

_API = {
    "LemonOAuthProvider": "lemon_skills.mcp.oauth.provider",
    "build_auth": "lemon_skills.mcp.oauth.provider",
}

__getattr__ = lazy_getattr(__name__, _API, globals())

__all__ = sorted(_API)
