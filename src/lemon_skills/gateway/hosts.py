"""What to add to each host's MCP config to use the gateway, in that host's own format
(pure: the command line in, the snippet out)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

#: Where each host reads its MCP servers from.
WHERE = {
    "claude": "claude_desktop_config.json (Claude Desktop: Settings > Developer > Edit Config)",
    "cursor": ".cursor/mcp.json in the project (or ~/.cursor/mcp.json for every project)",
    "vscode": ".vscode/mcp.json in the project",
    "codex": "~/.codex/config.toml",
}


def command_line(cwd: Path, *, tools: str = "auto", agent: str | None = None) -> list[str]:
    """The gateway's command line, with an absolute ``lemon`` (hosts do not share a
    shell's PATH)."""
    beside = Path(sys.executable).parent / "lemon"
    exe = str(beside) if beside.exists() else shutil.which("lemon") or "lemon"
    args = [exe, "mcp", "gateway", "--cwd", str(cwd)]
    if tools != "auto":
        args += ["--tools", tools]
    if agent:
        args += ["--agent", agent]
    return args


def snippet(
    host: str, cwd: Path, *, tools: str = "auto", agent: str | None = None
) -> tuple[str, dict[str, Any]]:
    """``(text to paste, the same as data)`` for ``host`` (claude, cursor, vscode, codex)."""
    command, *args = command_line(cwd, tools=tools, agent=agent)
    entry: dict[str, Any] = {"command": command, "args": args}
    if host == "codex":
        lines = [
            f"# add to {WHERE[host]}",
            "[mcp_servers.lemon]",
            f"command = {json.dumps(command)}",
            "args = [" + ", ".join(json.dumps(a) for a in args) + "]",
        ]
        return "\n".join(lines), {
            "host": host,
            "where": WHERE[host],
            "mcp_servers": {"lemon": entry},
        }
    if host == "vscode":
        data: dict[str, Any] = {"servers": {"lemon": {"type": "stdio", **entry}}}
    else:
        data = {"mcpServers": {"lemon": entry}}
    return json.dumps(data, indent=2), {"host": host, "where": WHERE[host], **data}
