"""``lemon mcp refresh-skills``: list the skill servers again and save their listings."""

from __future__ import annotations

from pathlib import Path

import click

from lemon_skills.cli._output import emit_json, json_option, note
from lemon_skills.cli.mcp import cwd_option
from lemon_skills.paths import resolve_cwd


@click.command("refresh-skills")
@cwd_option
@click.option("--quiet", is_flag=True, help="Print nothing (the background refresh).")
@json_option
def refresh_skills_cmd(cwd: Path | None = None, quiet: bool = False, as_json: bool = False) -> None:
    """Ask the MCP servers whose skills are on in --cwd for their skills and save the listings.

    Commands such as `lemon prompt` answer from the saved listings without starting the
    servers, and run this in the background once a listing is older than the lifetime its
    server gave it (ttlMs; 60 s without one). A saved listing grants nothing: a skill whose
    listing changed since you approved it stays withheld, and a file is used only when its
    digest is the listed one. Only servers that would start here are asked: a project's
    servers need `lemon mcp trust` first.

    \b
      lemon mcp refresh-skills --cwd ~/src/app
    """
    from lemon_skills.tools.mcp_skills import McpSkillSource

    names = McpSkillSource().refresh(resolve_cwd(cwd))
    if as_json:
        emit_json({"servers": names})
    elif not quiet:
        note(f"refreshed the skill listings of: {', '.join(names) or 'no server'}")
