"""``lemon mcp tools|resources|prompts``: what the servers offer, after filters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from lemon_skills.cli._output import (
    emit_json,
    first_line,
    json_option,
    note,
    semantic_option,
    table,
    warn,
)
from lemon_skills.cli.mcp import cwd_option, server_option
from lemon_skills.cli.mcp.servers import connect, print_held, progress

F = TypeVar("F", bound=Callable[..., Any])


_EXIT_HELP = """
    \b
    A server that failed to start, is disconnected or refused the listing gets a warning on
    stderr (stdout stays a valid listing, --json included) and the others are still listed.
    Exit status: 0 when every server that applies answered, 1 when any of them failed (or
    --server names no configured server)."""


def _listing_help(summary: str) -> Callable[[F], F]:
    def decorate(f: F) -> F:
        f.__doc__ = summary + "\n" + _EXIT_HELP
        return f

    return decorate


@click.command("tools")
@server_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "anthropic", "gemini"]),
    default=None,
    help="Print the tool definitions as this provider takes them (JSON; openai = strict mode). "
    "A tool whose schema cannot be expressed is left out with a warning saying why.",
)
@cwd_option
@json_option
@click.option(
    "--for",
    "request",
    default=None,
    help="Only the tools that fit this request, best first (nothing when none fits).",
)
@click.option("--explain", is_flag=True, help="With --for: show what each score is made of.")
@click.option("--max-results", "-n", default=5, show_default=True, type=click.IntRange(1))
@semantic_option
@_listing_help("List the tools (mcp_<server>_<tool>) of the servers, or with --for rank them.")
def tools_cmd(
    server: str | None = None,
    fmt: str | None = None,
    cwd: Path | None = None,
    as_json: bool = False,
    request: str | None = None,
    explain: bool = False,
    max_results: int = 5,
    semantic: bool | None = None,
) -> int:
    from lemon_skills.cli.toolsearch import show_matches
    from lemon_skills.mcp.catalog.toolsearch import find_tools

    with connect(cwd) as source:
        report = source.report("tools", server=server, progress=progress())
        servers = [server] if server else None
        found = (
            find_tools(
                request,
                max_results=max_results,
                servers=servers,
                source=source,
                semantic=semantic,
            )
            if request is not None
            else None
        )
        held = source.status()["servers"]
    print_held({k: v for k, v in held.items() if server is None or k == server})
    if found is not None:
        show_matches(found, explain=explain, as_json=as_json)
    elif fmt is not None:
        _emit_provider_tools(report.rows, "openai-strict" if fmt == "openai" else fmt)
    elif as_json:
        emit_json([_tool_row(r) for r in report.rows])
    else:
        table(
            ["NAME", "SERVER", "TOOL", "DESCRIPTION"],
            [
                [r["name"], r["server"], r["tool"], first_line(r["description"])]
                for r in report.rows
            ],
        )
    return _finish(report, "tools")


@click.command("resources")
@server_option
@cwd_option
@json_option
@_listing_help("List the resources the servers offer (after filters).")
def resources_cmd(server: str | None = None, cwd: Path | None = None, as_json: bool = False) -> int:
    return _list(
        "resources",
        server,
        cwd,
        as_json,
        ["SERVER", "URI", "NAME", "DESCRIPTION"],
        lambda r: [
            r["server"],
            r.get("uri") or r.get("uriTemplate", ""),
            r.get("name", ""),
            first_line(r.get("description", "")),
        ],
    )


@click.command("prompts")
@server_option
@cwd_option
@json_option
@_listing_help("List the prompts the servers offer (after filters).")
def prompts_cmd(server: str | None = None, cwd: Path | None = None, as_json: bool = False) -> int:
    return _list(
        "prompts",
        server,
        cwd,
        as_json,
        ["SERVER", "NAME", "ARGUMENTS", "DESCRIPTION"],
        lambda r: [
            r["server"],
            r["name"],
            ", ".join(a["name"] for a in r.get("arguments", [])),
            first_line(r.get("description", "")),
        ],
    )


def _list(
    what: str,
    server: str | None,
    cwd: Path | None,
    as_json: bool,
    headers: list[str],
    row: Callable[[dict[str, Any]], list[str]],
) -> int:
    """One listing of the servers' ``what``: its rows as JSON, or a table of ``row``s."""
    with connect(cwd) as source:
        report = source.report(what, server=server, progress=progress())
    if as_json:
        emit_json(list(report.rows))
    else:
        table(headers, [row(r) for r in report.rows])
    return _finish(report, what)


def _finish(report: Any, what: str) -> int:
    """Warn about every server that could not contribute; the listing's exit status."""
    if report.off_reason:
        note(report.off_reason)
    for p in report.problems:
        warn(
            f"MCP server {p.server!r} {p.state}: {p.error}; its {what} are not listed "
            "(run `lemon mcp status` for details)"
        )
    if not report.rows and not report.problems and not report.off_reason:
        hint = " (run `lemon mcp status` to see why)" if what == "tools" else ""
        note(f"no MCP {what}{hint}")
    return 1 if report.problems else 0


def _emit_provider_tools(rows: Any, fmt: Any) -> None:
    from lemon_skills.tool import Tool, ToolResult, export_tools

    def unused(params: dict[str, Any], ctx: Any) -> ToolResult:
        raise NotImplementedError

    tools = [
        Tool(
            name=r["name"],
            description=r["description"],
            parameters=r["input_schema"],
            handler=unused,
        )
        for r in rows
    ]
    defs, excluded = export_tools(tools, fmt)
    emit_json(defs)
    for e in excluded:
        warn(f"{e.name} left out: {e.reason}")


def _tool_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("name", "server", "tool", "description", "input_schema")}
