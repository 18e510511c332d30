"""``lemon prompt REQUEST``: the system-prompt block (and with --tools the tools) an agent would
receive."""

from __future__ import annotations

from pathlib import Path

import click

from lemon_skills.cli._background import index_later, refresh_later
from lemon_skills.cli._output import (
    agent_option,
    cwd_option,
    emit_json,
    files_option,
    json_option,
    note,
    warn,
)
from lemon_skills.skills.prompt import DEFAULT_BUDGET


@click.command()
@click.argument("request")
@cwd_option
@click.option(
    "--max-results",
    default=3,
    show_default=True,
    type=click.IntRange(0, 50),
    help="How many relevant skills to include in full.",
)
@click.option(
    "--budget",
    default=None,
    type=click.IntRange(200),
    help=f"Character budget for the whole block [default: the agent profile's, else "
    f"{DEFAULT_BUDGET}].",
)
@click.option(
    "--metadata-only",
    is_flag=True,
    help="Render relevant skills as metadata (the agent loads them with read_skill).",
)
@click.option("--verbose", "-v", is_flag=True, help="Name the skills left out for budget.")
@click.option(
    "--tools",
    "with_tools",
    is_flag=True,
    help="Also choose the tools to send for REQUEST (built-ins, pinned and best-fitting MCP "
    "tools, tool_search) within the same budget; starts the configured MCP servers.",
)
@click.option(
    "--max-tools",
    default=5,
    show_default=True,
    type=click.IntRange(0, 50),
    help="With --tools: how many MCP tools ranked for REQUEST to send.",
)
@json_option
@files_option
@agent_option
def prompt(
    request: str,
    cwd: Path | None = None,
    max_results: int = 3,
    budget: int | None = None,
    metadata_only: bool = False,
    verbose: bool = False,
    as_json: bool = False,
    files: tuple[Path, ...] = (),
    agent: str | None = None,
    with_tools: bool = False,
    max_tools: int = 5,
) -> None:
    """Print the skills block for REQUEST: relevant skills plus the catalogue.

    \b
    Example:
      lemon prompt "add a reversible migration for the orders table" --cwd examples/project
    """
    _preview_only()
    from lemon_skills.prompt import render

    rendered = render(
        request,
        tools=with_tools,
        max_tools=max_tools,
        cwd=cwd,
        max_results=max_results,
        budget=budget,
        mode="metadata" if metadata_only else "content",
        files=files,
        agent=agent,
    )
    index_later(cwd)
    refresh_later(cwd)
    if with_tools:
        _dropped_servers(cwd)
    if as_json:
        emit_json(
            {
                "text": rendered.text,
                "relevant": list(rendered.relevant),
                "listed": list(rendered.listed),
                "shortened": list(rendered.shortened),
                "truncated": list(rendered.truncated),
                "omitted": list(rendered.omitted),
                "budget": rendered.budget,
                "chars": len(rendered.text),
            }
            | (
                {
                    "tools": [t.to_anthropic() for t in rendered.tools],
                    "tool_chars": rendered.tool_chars,
                }
                if with_tools
                else {}
            )
        )
        return
    if with_tools:
        names = ", ".join(t.name for t in rendered.tools) or "none"
        note(f"tools to send: {names} ({rendered.tool_chars} chars of definitions)")
    if not rendered.text:
        note("no skills are visible here; nothing to add to the prompt")
        return
    click.echo(rendered.text)
    relevant = ", ".join(rendered.relevant) or "none"
    note(
        f"relevant: {relevant}; {len(rendered.listed)} in catalogue; "
        f"{len(rendered.text)}/{rendered.budget} chars"
    )
    for line in rendered.diagnostics:
        warn(line)
    if verbose and rendered.omitted:
        warn("left out for budget: " + ", ".join(rendered.omitted))


def _dropped_servers(cwd: Path | None) -> None:
    """Name on stderr the configured servers whose tools could not be offered because their
    config is broken (a whole file, or one entry)."""
    from lemon_skills.mcp.config.resolve import load
    from lemon_skills.paths import resolve_cwd

    dropped: dict[str, list[str]] = {}
    for issue in load(resolve_cwd(cwd), notify=False).issues:
        source = issue.path or issue.origin
        what = f"MCP server {issue.name!r}" if issue.name else f"the MCP servers of {source}"
        dropped.setdefault(what, []).append(issue.reason)
    for what, reasons in dropped.items():
        warn(f"{what} dropped (no tools offered from it): {'; '.join(reasons)}")


def _preview_only() -> None:
    """Keep this preview out of the event store: no agent was given this block, and a
    read-only command must leave nothing in the agent dir but its cache."""
    from lemon_skills import telemetry
    from lemon_skills.skills.usage import observe

    observe.ensure_bridge()
    telemetry.detach(observe.BRIDGE_ID)
