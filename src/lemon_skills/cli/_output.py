"""Rendering shared by every command: JSON, aligned tables, colours, common options."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import click

from lemon_skills.paths import Scope

if TYPE_CHECKING:
    from lemon_skills.search.metrics import Report

F = TypeVar("F", bound=Callable[..., Any])

STATE_COLOURS = {
    "active": "green",
    "ready": "green",
    "pass": "green",
    "connected": "green",
    "not_ready": "yellow",
    "warn": "yellow",
    "warning": "yellow",
    "stale": "yellow",
    "hidden": "bright_black",
    "disabled": "bright_black",
    "archived": "bright_black",
    "platform_incompatible": "magenta",
    "blocked": "red",
    "block": "red",
    "error": "red",
}


SKILLS_CWD_HELP = (
    "Project directory whose .lemon/ and .agents/ skills are used (default: current dir)."
)


def cwd_option(f: F) -> F:
    """``--cwd DIR``: the project directory (default: the current directory)."""
    return project_option(SKILLS_CWD_HELP)(f)


def files_option(f: F) -> F:
    """``--file PATH`` (repeatable): the files in play, for path-scoped skills and rules."""
    return click.option(
        "--file",
        "files",
        multiple=True,
        type=click.Path(path_type=Path),
        help="A file the agent is working on (repeatable); skills with paths: globs are "
        "offered only when one matches, Cursor glob rules are attached.",
    )(f)


def agent_option(f: F) -> F:
    """``--agent NAME``: apply that agent's skill profile from skills.json."""
    return click.option(
        "--agent",
        default=None,
        metavar="NAME",
        help="Apply this agent's skill profile (profiles in skills.json).",
    )(f)


def project_option(help_text: str, *, expose_value: bool = True) -> Callable[[F], F]:
    """``--cwd DIR`` with a help text saying what the project directory selects."""

    def decorate(f: F) -> F:
        return click.option(
            "--cwd",
            # A mistyped project dir must not read as an empty project.
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            default=None,
            expose_value=expose_value,
            help=help_text,
        )(f)

    return decorate


def http_exposure_options(what: str) -> Callable[[F], F]:
    """``--http HOST:PORT``, ``--token-file FILE`` and ``--allow-origin ORIGIN`` (repeatable)
    of a command that serves ``what`` over Streamable HTTP or, without ``--http``, stdio."""

    def decorate(f: F) -> F:
        f = click.option(
            "--allow-origin",
            "allow_origins",
            multiple=True,
            metavar="ORIGIN",
            help="With --http: also accept browser requests from this origin, e.g. "
            "https://app.example (repeatable). Other origins get 403.",
        )(f)
        f = click.option(
            "--token-file",
            "token_file",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            metavar="FILE",
            help="With --http: bearer tokens clients must send, one per line; 'TOKEN AGENT' "
            "binds a token to an agent profile. Required for any bind but 127.0.0.1, "
            "localhost or ::1.",
        )(f)
        return click.option(
            "--http",
            "http",
            default=None,
            metavar="HOST:PORT",
            help=f"Serve {what} over Streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
        )(f)

    return decorate


def agent_dir_cwd_option(f: F) -> F:
    """``--cwd DIR`` on a command whose data lives in the agent dir, not in a project.

    Every command takes ``--cwd`` so scripts can pass it uniformly; here it is checked like
    everywhere else (a missing directory is an error) and changes nothing else.
    """
    return project_option(
        "Project directory; checked like every command's --cwd, but this command's "
        "records live in the agent dir, so it does not change what is shown.",
        expose_value=False,
    )(f)


def scope_options(default: Scope | None, *, legacy_project: str | None = None) -> Callable[[F], F]:
    """``--project`` / ``--global``: the one scope flag pair of every command that picks a scope.

    The command receives ``scope``: the flag given, else ``default`` (``None``: both scopes,
    project first). Giving both is a usage error. ``legacy_project`` names an older spelling
    of ``--project`` that keeps working, hidden from the help.
    """
    only = "Only " if default is None else ""
    tail = "" if default is None else " instead of the global one"
    project_help = f"{only or 'Use '}the project scope (<cwd>/.lemon){tail}."
    global_help = f"{only or 'Use '}the global scope (the agent dir)" + (
        "." if default is None else "; the default."
    )

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, project: bool, global_: bool, **kw: Any) -> Any:
            project = kw.pop("legacy_project", False) or project
            if project and global_:
                raise click.UsageError("--project and --global exclude each other")
            kw["scope"] = "project" if project else "global" if global_ else default
            return f(*args, **kw)

        command = click.option("--global", "global_", is_flag=True, help=global_help)(command)
        command = click.option("--project", is_flag=True, help=project_help)(command)
        if legacy_project:
            alias = click.option(legacy_project, "legacy_project", is_flag=True, hidden=True)
            command = alias(command)
        return cast(F, command)

    return decorate


def json_option(f: F) -> F:
    """``--json``: machine-readable output on stdout."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(f)


def emit_json(data: Any) -> None:
    """Print ``data`` as JSON: indented on a terminal, compact (and much faster) in a pipe.

    In a pipe non-ASCII text is written as ``\\u`` escapes: the same JSON values for any
    parser, and pure-ASCII text is written about twice as fast as UTF-8.
    """
    if sys.stdout.isatty():
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        # Command output is built fresh from records, never cyclic: skip the cycle check.
        click.echo(json.dumps(data, default=str, check_circular=False))


class _Record(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


def emit_json_records(records: Iterable[_Record], extra: dict[str, Any] | None = None) -> None:
    """Print ``[r.to_dict() ...]``, or ``{"skills": [...], **extra}`` when ``extra`` is given.

    Built with the cyclic GC paused: thousands of small acyclic dicts otherwise trigger
    collections that cost more than building them.
    """
    from lemon_skills._gc import gc_paused

    with gc_paused():
        _emit_records(records, extra)  # the dicts are gone before the collector runs again


def _emit_records(records: Iterable[_Record], extra: dict[str, Any] | None) -> None:
    items = [r.to_dict() for r in records]
    emit_json(items if extra is None else {"skills": items, **extra})


def colour(text: str, state: str | None = None, **style: Any) -> str:
    """Colour ``text`` by a state name (click strips styles when stdout is not a terminal)."""
    fg = STATE_COLOURS.get(state or text)
    return click.style(text, fg=fg, **style) if fg or style else text


def first_line(text: str | None) -> str:
    """The first line of a description, for a table cell ("" when there is none)."""
    stripped = (text or "").strip()
    return stripped.splitlines()[0] if stripped else ""


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, wrap_last: bool = True) -> None:
    """Print an aligned table; the last column is cut to the terminal width."""
    if not rows:
        return
    plain = [[click.unstyle(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in plain)) for i, h in enumerate(headers)]
    import shutil  # tables only; JSON output never needs it

    width = shutil.get_terminal_size((120, 24)).columns
    fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
    last = max(20, width - fixed) if wrap_last and sys.stdout.isatty() else widths[-1]
    click.echo(_row([click.style(h, bold=True) for h in headers], list(headers), widths, last))
    for styled, raw in zip(rows, plain, strict=True):
        click.echo(_row(list(styled), raw, widths, last))


def _row(styled: list[str], raw: list[str], widths: list[int], last: int) -> str:
    cells = []
    for i, (s, r) in enumerate(zip(styled, raw, strict=True)):
        if i == len(raw) - 1:
            cells.append(s if len(r) <= last else r[: max(last - 1, 1)] + "…")
        else:
            cells.append(s + " " * (widths[i] - len(r)))
    return "  ".join(cells).rstrip()


def note(message: str) -> None:
    """A secondary line on stderr (progress, hints) that never pollutes JSON on stdout."""
    click.secho(message, err=True, fg="bright_black")


def warn(message: str) -> None:
    """A warning on stderr."""
    click.secho(f"warning: {message}", err=True, fg="yellow")


def semantic_option(f: F) -> F:
    """``--semantic/--no-semantic``: add embedding similarity (default: ``$LEMON_SEMANTIC``,
    else on when the semantic extra and its model are installed)."""
    return click.option(
        "--semantic/--no-semantic",
        default=None,
        help="Add embedding similarity to the lexical score (needs the semantic extra "
        "and its model; default: on once both are installed, LEMON_SEMANTIC=0 turns it off).",
    )(f)


def eval_report(
    r: Report,
    *,
    noun: str,
    tail: str = "",
    recall_at_5: bool = False,
    extra: Sequence[tuple[str, str]] = (),
    expected_shown: int | None = None,
) -> None:
    """Print a retrieval evaluation: counts, metrics, recall per kind and every miss.

    ``noun`` is what a query should find ("skill", "tool"); ``extra`` adds labelled lines
    after the metrics; ``expected_shown`` cuts each miss's expected list.
    """
    click.echo(f"queries {r.count} ({r.targeted} targeted, {r.none} with no right {noun}){tail}")
    eval_metrics(r, recall_at_5=recall_at_5)
    for label, text in extra:
        click.echo(f"{label:<16}{text}")
    click.echo("")
    table(
        ["KIND", "N", "RECALL@1", "RECALL@3", "NONE-REJECTION"],
        [
            [
                k.kind,
                str(k.count),
                ratio(k.recall_at_1),
                ratio(k.recall_at_3),
                ratio(k.none_rejection),
            ]
            for k in r.per_kind
        ],
        wrap_last=False,
    )
    if r.misses:
        click.echo(f"\nmisses ({len(r.misses)}):")
    for o in r.misses:
        where = f"rank {o.rank}" if o.rank else "not found"
        expected = ", ".join(o.case.expected[:expected_shown]) or "(nothing)"
        click.echo(f"  [{o.case.kind}] {o.case.query}")
        click.echo(f"      expected {expected}; got {', '.join(o.got[:3]) or '(nothing)'}; {where}")


def eval_metrics(r: Report, *, recall_at_5: bool = False) -> None:
    """One aligned line per retrieval metric of ``r``."""
    rows = [
        ("recall@1", r.recall_at_1),
        ("recall@3", r.recall_at_3),
        *([("recall@5", r.recall_at_5)] if recall_at_5 else []),
        ("MRR", r.mrr),
        ("none-rejection", r.none_rejection),
        ("false-rejection", r.false_rejection),
    ]
    for label, value in rows:
        click.echo(f"{label:<16}{ratio(value)}")


def ratio(value: float | None) -> str:
    """A metric to three decimals; ``-`` when there was nothing to measure."""
    return "-" if value is None else f"{value:.3f}"


def score_parts(parts: Mapping[str, float]) -> None:
    """A ranking score's parts, one aligned line each: matched terms first, largest first."""
    terms = sorted(((k, v) for k, v in parts.items() if k.startswith("term:")), key=_by_value)
    rest = [(k, v) for k, v in parts.items() if not k.startswith("term:")]
    for name, value in [*terms, *rest]:
        click.echo(f"    {name:<28} {value:8.3f}")


def _by_value(kv: tuple[str, float]) -> float:
    return -kv[1]


def queries_option(expected: str) -> Callable[[F], F]:
    """``--queries FILE``: labelled queries, one JSON object a line; ``expected`` says what
    the ``expected`` list holds."""
    return click.option(
        "--queries",
        "queries_file",
        required=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help=f'JSONL file: one {{"query", "expected": {expected}, "kind"}} per line.',
    )
