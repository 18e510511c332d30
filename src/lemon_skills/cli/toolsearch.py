"""``lemon mcp tools --for`` output and ``lemon mcp eval``: rank MCP tools, measure the ranking."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lemon_skills.cli._output import (
    cwd_option,
    emit_json,
    json_option,
    note,
    semantic_option,
    table,
)
from lemon_skills.paths import resolve_cwd
from lemon_skills.search.metrics import load_cases

if TYPE_CHECKING:
    from lemon_skills.mcp.toolsearch import ToolEval, ToolMatch


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
            [[m.spec.name, f"{m.score:.2f}", _first_line(m.spec.description)] for m in found],
        )
        return
    for m in found:
        click.echo(f"{click.style(m.spec.name, bold=True)}  {m.score:.2f}")
        terms = sorted((kv for kv in m.parts.items() if kv[0].startswith("term:")), key=_by_value)
        rest = [kv for kv in m.parts.items() if not kv[0].startswith("term:")]
        for name, value in [*terms, *rest]:
            click.echo(f"    {name:<28} {value:8.3f}")


@click.command("eval")
@click.option(
    "--queries",
    "queries_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSONL file: one {"query", "expected": ["server/tool", ...], "kind"} per line.',
)
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
    from lemon_skills.mcp import toolsearch
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
        _print(result, len(specs))


def _print(result: ToolEval, tools: int) -> None:
    r = result.report
    click.echo(
        f"queries {r.count} ({r.targeted} targeted, {r.none} with no right tool); {tools} tools"
    )
    for label, value in (
        ("recall@1", r.recall_at_1),
        ("recall@3", r.recall_at_3),
        ("recall@5", r.recall_at_5),
        ("MRR", r.mrr),
        ("none-rejection", r.none_rejection),
        ("false-rejection", r.false_rejection),
    ):
        click.echo(f"{label:<16}{value:.3f}")
    click.echo(f"{'p50':<16}{result.p50_ms:.2f} ms")
    click.echo("")
    table(
        ["KIND", "N", "RECALL@1", "RECALL@3", "NONE-REJECTION"],
        [
            [k.kind, str(k.count), _pct(k.recall_at_1), _pct(k.recall_at_3), _pct(k.none_rejection)]
            for k in r.per_kind
        ],
        wrap_last=False,
    )
    if r.misses:
        click.echo(f"\nmisses ({len(r.misses)}):")
    for o in r.misses:
        where = f"rank {o.rank}" if o.rank else "not found"
        expected = ", ".join(o.case.expected[:3]) or "(nothing)"
        click.echo(f"  [{o.case.kind}] {o.case.query}")
        click.echo(f"      expected {expected}; got {', '.join(o.got[:3]) or '(nothing)'}; {where}")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _by_value(kv: tuple[str, float]) -> float:
    return -kv[1]


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""
