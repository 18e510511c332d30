"""``lemon mcp serve``: this project's skills served to any MCP host (SEP-2640)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from lemon_skills.cli._output import http_exposure_options, project_option
from lemon_skills.paths import resolve_cwd


@click.command("serve")
@http_exposure_options("the skills")
@project_option("Project whose skills are served, with the global ones (default: current dir).")
@click.option(
    "--skills-only/--tools",
    "skills_only",
    default=False,
    help="Offer only the skills extension and prompts, or also the find_skills and "
    "read_skill tools (default).",
)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Also offer skill_manage (every write still goes through approvals).",
)
@click.option(
    "--agent",
    default=None,
    metavar="NAME",
    help="Serve only what this agent's skill profile (skills.json profiles) lets it see.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Print what would be served, what is served under another name and what cannot be "
    "served and why, then exit (1 when a skill cannot be served).",
)
def serve_cmd(
    http: str | None,
    skills_only: bool,
    allow_write: bool,
    check: bool = False,
    cwd: Path | None = None,
    agent: str | None = None,
    token_file: Path | None = None,
    allow_origins: tuple[str, ...] = (),
) -> int | None:
    """Serve this project's skills to any MCP host (SEP-2640 skills, prompts and tools).

    Read-only unless --allow-write. Serves what `lemon prompt` would offer, and tells
    clients when a skill is added, edited or removed.

    \b
    Over HTTP (Streamable HTTP at /mcp):
      lemon mcp serve --http 127.0.0.1:8765                        this machine only
      lemon mcp serve --http 0.0.0.0:8765 --token-file tokens.txt  the network, with tokens
    Requests whose Host or Origin is not the server's own get 403 (DNS rebinding, web pages).
    """
    import anyio

    from lemon_skills.tools.serve.server import Options, serve_stdio

    options = Options(
        cwd=resolve_cwd(cwd), tools=not skills_only, allow_write=allow_write, agent=agent
    )
    if check:
        return _serve_check(options)
    if http is None:
        if token_file is not None or allow_origins:
            raise click.UsageError("--token-file and --allow-origin need --http HOST:PORT")
        anyio.run(serve_stdio, options)
        return None
    from lemon_skills.tools.serve.guard import check_exposure, exposure_for
    from lemon_skills.tools.serve.web import serve_http

    exposure = exposure_for(http, token_file, allow_origins)
    check_exposure(exposure)

    def listening(url: str) -> None:
        tokens = f", {len(exposure.grants)} bearer token(s)" if exposure.grants else ""
        click.echo(f"serving skills on {url}{tokens} (Ctrl-C stops)")

    anyio.run(serve_http, options, exposure, listening)
    return None


def _serve_check(options: Any) -> int:
    from lemon_skills.skills.remote.model import ORIGINAL_NAME_KEY
    from lemon_skills.tools.serve.server import checked

    catalog = checked(options)
    click.echo(f"{len(catalog.skills)} skills served")
    renamed = catalog.renamed()
    if renamed:
        click.echo(
            f"{len(renamed)} served under their folder name (their own name breaks the Agent "
            f"Skills naming rules; it is kept in metadata {ORIGINAL_NAME_KEY!r}):"
        )
        for key, own, served in renamed:
            click.echo(f"  {key}: {own!r} as {served!r}")
    if catalog.normalised:
        click.echo(f"{len(catalog.normalised)} served with normalised frontmatter:")
        for why in catalog.normalised:
            click.echo(f"  {why}")
    if catalog.skipped:
        click.echo(f"{len(catalog.skipped)} not served:")
        for why in catalog.skipped:
            click.echo(f"  {why}")
    return 1 if catalog.skipped else 0
