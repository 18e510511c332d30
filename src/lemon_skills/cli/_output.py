"""Rendering shared by every command: JSON, aligned tables, colours, common options."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

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
    """``--semantic/--no-semantic``: add embedding similarity (default ``$LEMON_SEMANTIC``)."""
    return click.option(
        "--semantic/--no-semantic",
        default=None,
        help="Add embedding similarity to the lexical score (needs the semantic extra; "
        "default: $LEMON_SEMANTIC).",
    )(f)
