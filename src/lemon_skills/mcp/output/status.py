"""What ``status`` shows for one directory: each server's state, counts, policy and held
tools, the servers that are off or untrusted, and the config problems (no I/O)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lemon_skills.mcp.catalog.filters import prompt_allowed, resource_allowed
from lemon_skills.mcp.session.logs import redact

if TYPE_CHECKING:
    from lemon_skills.mcp.catalog.views import Views


def directory_status(core: Views, cwd: Path) -> dict[str, Any]:
    """The status dict of ``cwd``'s view (no I/O)."""
    view = core.view(cwd)
    cfg = view.config
    now = anyio.current_time()
    servers: dict[str, Any] = {}
    for h in view.handles:
        snap = h.snapshot(now=now)
        f = h.config.filters
        lst = h.listing
        snap["tool_count"] = sum(1 for s in view.specs if s.key == h.key)
        snap["resource_count"] = sum(
            1 for r in lst.resources if resource_allowed(f, r.uri, r.name)
        ) + sum(1 for t in lst.templates if resource_allowed(f, t.uri_template, t.name))
        snap["prompt_count"] = sum(1 for p in lst.prompts if prompt_allowed(f, p.name))
        snap["policy"] = h.config.policy.to_dict()
        snap["held_tools"] = core.review(h).to_list()
        servers[h.name] = snap
    for s in cfg.servers:
        if (not s.enabled or not s.trusted) and s.name:
            servers.setdefault(s.name, _disabled_entry(s, cfg.state_of(s)))
    skipped = cfg.untrusted_notice()
    return {
        "untrusted_project": (
            cfg.trust.to_dict() | {"notice": skipped} if cfg.trust and skipped else None
        ),
        "disabled": not cfg.enabled,
        "disabled_reason": cfg.disabled_reason,
        "servers": servers if cfg.enabled else {},
        "cached_tools": len(view.specs) if cfg.enabled else 0,
        "cache_ttl_ms": round(core.cache_ttl_s * 1000),
        "config_errors": [i.to_dict() for i in cfg.issues],
        "conflicts": [c.to_dict() for c in view.conflicts],
    }


def _disabled_entry(cfg: Any, state: str) -> dict[str, Any]:
    return {
        "connected": False,
        "state": state,
        "transport": cfg.transport,
        "origin": cfg.origin,
        "target": redact(cfg.target),
        "tool_count": 0,
        "resource_count": 0,
        "prompt_count": 0,
        "capabilities": {},
        "last_error": None,
    }
