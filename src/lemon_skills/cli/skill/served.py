"""Skills served by MCP servers, as ``lemon skill`` names them: the server as its config
spells it (``my-skills``) or as lemon names it (``my_skills``), and whose skills are off."""

from __future__ import annotations

from pathlib import Path

from lemon_skills.errors import ConfigError
from lemon_skills.paths import resolve_cwd


def namespace_key(key: str, cwd: Path | None, *, enabling: bool) -> str:
    """``key``, with a ``<server>:*`` namespace spelt as in the config turned into lemon's
    name for that server (the one skill keys and tool names use).

    Raises:
        ConfigError: ``enabling`` a namespace that names no configured server and holds no
            visible skill (nothing would ever be enabled by it).
    """
    if not key.endswith(":*"):
        return key
    from lemon_skills.mcp.config.resolve import load, server_called
    from lemon_skills.skills.catalog import registry

    prefix = key[:-2]
    server = server_called(load(resolve_cwd(cwd), notify=False), prefix)
    if server is not None and server.name:
        return f"{server.name}:*"
    if enabling and not any(e.key.startswith(prefix + ":") for e in registry.view(cwd).entries):
        raise ConfigError(
            f"no MCP server, plugin or skill namespace called {prefix!r} here",
            hint="`lemon mcp list` shows the configured servers; nothing was changed",
        )
    return key


def skills_off(cwd: Path | None) -> list[str]:
    """One line for each active server of ``cwd`` whose skills are off, saying how to turn
    them on (the servers are not started: whether they offer skills is not known)."""
    from lemon_skills.mcp.config.resolve import load
    from lemon_skills.tools.mcp_skills import McpSkillSource

    where = resolve_cwd(cwd)
    on = set(McpSkillSource().servers(where))
    lines = []
    for s in load(where, notify=False).active():
        if s.name and s.name not in on:
            spelt = f" ({s.given_name} in its config)" if s.given_name else ""
            lines.append(
                f"skills of MCP server {s.name!r}{spelt} are off; to use any it serves, run "
                f'`lemon skill enable \'{s.name}:*\'` or set "skills": "enabled" in its entry'
            )
    return lines
