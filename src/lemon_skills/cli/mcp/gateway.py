"""``lemon mcp gateway``: every configured MCP server and this project's skills, behind
lemon's policy, as one MCP server for any host."""

from __future__ import annotations

from pathlib import Path

import click

from lemon_skills.cli._output import (
    emit_json,
    http_exposure_options,
    json_option,
    project_option,
)
from lemon_skills.paths import resolve_cwd

HOSTS = ("claude", "cursor", "vscode", "codex")


@click.command("gateway")
@project_option("Project whose MCP servers and skills are served (default: current dir).")
@click.option(
    "--tools",
    "tools",
    type=click.Choice(["auto", "all", "search"]),
    default="auto",
    show_default=True,
    help="all: list every tool; search: list the always_load tools and tool_search, which "
    "adds what it finds; auto: search when all definitions would take over 10% of a "
    "200k-token context.",
)
@click.option(
    "--agent",
    default=None,
    metavar="NAME",
    help="Apply this agent's profile (skills.json profiles) to skills and servers "
    "(a server is the key mcp:<server>).",
)
@click.option(
    "--print-config",
    "host",
    type=click.Choice(HOSTS),
    default=None,
    help="Print what to add to that host's MCP config to use the gateway, then exit.",
)
@http_exposure_options("every server and skill")
@click.option(
    "--state-secret-file",
    "secret_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A secret of at least 32 bytes shared by every replica of this gateway (else "
    "LEMON_GATEWAY_SECRET): it seals 2026-07-28 requestState so any replica opens it. "
    "See docs/team.md.",
)
@click.option(
    "--answer-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a 2026-07-28 host has to answer a server's question (elicitation or "
    "sampling) before the call is cancelled upstream.",
)
@json_option
def gateway_cmd(
    tools: str,
    agent: str | None = None,
    host: str | None = None,
    http: str | None = None,
    token_file: Path | None = None,
    allow_origins: tuple[str, ...] = (),
    secret_file: Path | None = None,
    answer_timeout: float = 300.0,
    cwd: Path | None = None,
    as_json: bool = False,
) -> None:
    """Serve every configured MCP server and this project's skills as one MCP server.

    \b
    Each server's tools are listed as mcp_<server>_<tool>, its resources as
    mcp+<server>:<uri> and its prompts as mcp_<server>_<prompt>. Every call goes through
    lemon's policy: approvals (asked through the host, or `lemon approvals`), pinning
    (`lemon mcp approve-changes`), result caps (read_result), timeouts.
    Put it in front of a host:  lemon mcp gateway --print-config claude
    Over HTTP:  lemon mcp gateway --http 127.0.0.1:8765 [--token-file tokens.txt]
    """
    where = resolve_cwd(cwd)
    if host is not None:
        from lemon_skills.gateway.hosts import snippet

        text, data = snippet(host, where, tools=tools, agent=agent)
        emit_json(data) if as_json else click.echo(text)
        return
    import anyio

    from lemon_skills.gateway.replicas import read_secret
    from lemon_skills.gateway.run import serve_stdio
    from lemon_skills.gateway.server import GatewayOptions

    if http is None and (token_file is not None or allow_origins or secret_file is not None):
        raise click.UsageError(
            "--token-file, --allow-origin and --state-secret-file need --http HOST:PORT"
        )
    options = GatewayOptions(
        cwd=where,
        agent=agent,
        tools=tools,  # type: ignore[arg-type]
        secret=read_secret(secret_file) if http is not None else None,
    )
    options.answer_timeout_s = answer_timeout
    if http is None:
        anyio.run(serve_stdio, options)
        return
    from lemon_skills.gateway.http import serve_http
    from lemon_skills.tools.serve.guard import exposure_for

    anyio.run(serve_http, options, exposure_for(http, token_file, allow_origins))
