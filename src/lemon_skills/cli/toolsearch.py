"""``lemon mcp tools --for`` output and ``lemon mcp eval``: rank MCP tools, measure the ranking."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lemon_skills.cli._output import (
    cwd_option,
    emit_json,
    eval_report,
    first_line,
    json_option,
    note,
    queries_option,
    score_parts,
    semantic_option,
    table,
)
from lemon_skills.paths import resolve_cwd
from lemon_skills.search.metrics import load_cases

if TYPE_CHECKING:
    from lemon_skills.mcp.catalog.toolsearch import ToolMatch


def show_matches(found: Sequence[ToolMatch], *, explain: bool, as_json: bool) -> None:
    """Print ranked tools: a table, with ``explain`` each score's parts, or JSON rows."""
    if as_json:
        emit_json([m.to_dict() for m in found])
        return
    if not found:
        note("no tool fits that request")
        return
    if not explain:
        table(
            ["NAME", "SCORE", "DESCRIPTION"],
            [[m.spec.name, f"{m.score:.2f}", first_line(m.spec.description)] for m in found],
        )
        return
    for m in found:
        click.echo(f"{click.style(m.spec.name, bold=True)}  {m.score:.2f}")
        score_parts(m.parts)


@click.command("eval")
@queries_option('["server/tool", ...]')
@click.option(
    "--tools",
    "tools_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSONL tool definitions (server, name, title, description, inputSchema, annotations) "
    "ranked offline instead of the configured servers' tools; no server is started.",
)
@cwd_option
@click.option(
    "--max-results", default=10, show_default=True, type=click.IntRange(5), help="Depth for MRR."
)
@json_option
@semantic_option
def eval_cmd(
    queries_file: Path,
    tools_file: Path | None = None,
    cwd: Path | None = None,
    max_results: int = 10,
    as_json: bool = False,
    semantic: bool | None = None,
) -> None:
    """Measure MCP tool retrieval on labelled queries.

    \b
    Prints recall@1/@3/@5 (a query is a hit when any expected tool is in the top 1 / 3 / 5),
    MRR, none-rejection (share of "expected": [] queries answered with nothing),
    false-rejection (share of targeted queries answered with nothing), the median time to
    rank one query, recall per kind, and every query not answered right.
    """
    from lemon_skills.mcp.catalog import toolsearch
    from lemon_skills.search import embed

    cases = load_cases(queries_file)
    if tools_file is not None:
        specs, instructions = toolsearch.load_tool_file(tools_file)
    else:
        from lemon_skills.mcp.source import McpSource

        with McpSource(cwd=resolve_cwd(cwd)) as source:
            source.discover_tools()
            view = source.catalogue()
            specs, instructions = (view.specs, view.instructions) if view else ([], {})
    result = toolsearch.evaluate_tools(
        cases,
        specs,
        instructions,
        max_results=max_results,
        semantic=embed.requested(semantic),
    )
    if as_json:
        emit_json(result.to_dict())
    else:
        eval_report(
            result.report,
            noun="tool",
            tail=f"; {len(specs)} tools",
            recall_at_5=True,
            extra=[("p50", f"{result.p50_ms:.2f} ms")],
            expected_shown=3,
        )
