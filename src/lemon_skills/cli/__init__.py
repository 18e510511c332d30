"""The ``lemon`` command line: one error boundary, lazily imported command groups.

Command groups live one per module or package (``cli/skill/``, ``cli/mcp/``...) and are
imported only when invoked, so ``lemon skill find`` never pays for the MCP SDK's import time.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from lemon_skills.cli._lazy import LazyGroup
from lemon_skills.errors import LemonSkillsError
from lemon_skills.paths import agent_dir

#: command name -> "module:attribute" of a click command, imported on first use.
COMMANDS: dict[str, str] = {
    "skill": "lemon_skills.cli.skill:skill",
    "prompt": "lemon_skills.cli.prompt:prompt",
    "approvals": "lemon_skills.cli.approvals:approvals",
    "mcp": "lemon_skills.cli.mcp:mcp",
    "state": "lemon_skills.cli.state:state_group",
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lemon-skills", prog_name="lemon")
def cli() -> None:
    """Skills and MCP tools for AI agents.

    \b
    Start here:
      lemon prompt "fix the flaky login test" --cwd PROJECT   what the agent would be given
      lemon skill list                                        every visible skill
      lemon skill doctor KEY                                  why a skill is not active
    """


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 1 error, 2 usage, 3 crash, 130 interrupt)."""
    _wire_mcp_server_names()
    args = list(argv) if argv is not None else sys.argv[1:]
    traced = _start_telemetry()
    try:
        try:
            with _command_span(args, traced):
                rv = cli.main(args=args, prog_name="lemon", standalone_mode=False)
        finally:
            failed = sys.exc_info()[1]
            if not (isinstance(failed, OSError) and failed.filename is not None):
                _report_unreadable_state()  # else the path at fault is named once, below
            if traced:
                _stop_telemetry()
    except LemonSkillsError as exc:
        _error(str(exc), exc.hint)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except Exception as exc:  # the CLI boundary: anything unexpected is logged, never a traceback
        if isinstance(exc, OSError) and exc.filename is not None:
            _error(*_unusable_path(exc))  # the machine's state, not a bug: no crash log
            return 1
        log = _write_crash_log()
        _error("unexpected internal error", f"details were written to {log}; please report them")
        return 3
    return rv if isinstance(rv, int) else 0


#: Any of these set asks for exporters (``lemon_skills.telemetry.otel.configure_from_env``).
OTEL_SWITCHES = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT")


def _start_telemetry() -> bool:
    """Install OpenTelemetry exporters when the environment asks for them (the otel extra)."""
    if not any(os.environ.get(name) for name in OTEL_SWITCHES):
        return False
    from lemon_skills.telemetry import otel

    return bool(otel.configure_from_env())


def _stop_telemetry() -> None:
    from lemon_skills.telemetry import otel

    otel.shutdown()


def _command_span(args: Sequence[str], traced: bool) -> contextlib.AbstractContextManager[Any]:
    """The root span of one command (``lemon skill find``), when exporters are installed."""
    if not traced:
        return contextlib.nullcontext()
    from lemon_skills.telemetry import otel

    words = [a for a in args if not a.startswith("-")][:2]
    if words in (["mcp", "serve"], ["mcp", "gateway"]):
        # A server's calls are traces of their own, not children of one span lasting hours.
        return contextlib.nullcontext()
    return otel.span(" ".join(["lemon", *words]), {"lemon.command": " ".join(words)})


def _wire_mcp_server_names() -> None:
    """Let skill status and prompts check ``requires.mcp_servers`` against the MCP config
    (the skills core cannot import the MCP layer; the MCP code loads only if a skill asks)."""
    from lemon_skills import settings

    if settings.settings().mcp_server_names is None:
        settings.configure(mcp_server_names=_mcp_server_names)


def _mcp_server_names(cwd: Path | None) -> list[str]:
    from lemon_skills.mcp.config.resolve import configured_server_names

    return configured_server_names(cwd)


def run() -> NoReturn:
    """The ``lemon`` executable: ``main()`` on ``sys.argv``, then exit with its code."""
    code = main()
    # The process ends here. Freezing the heap spares the interpreter's final collection a
    # pass over every object a command loaded (10,000 skills: a tenth of `skill list`).
    gc.freeze()
    sys.exit(code)


def _report_unreadable_state() -> None:
    """One stderr line per unreadable skills.json any command looked at (they fail closed)."""
    registry = sys.modules.get("lemon_skills.skills.catalog.registry")
    if registry is None:  # the command never looked at skills
        return
    for d in registry.default_registry().state_problems():
        click.secho(f"warning: {d.path}: {d.reason}", err=True, fg="yellow")


def _error(message: str, hint: str | None) -> None:
    click.secho(f"error: {message}", err=True, fg="red")
    if hint:
        click.echo(f"hint: {hint}", err=True)


def _unusable_path(exc: OSError) -> tuple[str, str]:
    """The one-line error and hint for a file lemon could not read or write."""
    where = Path(os.fsdecode(exc.filename))
    message = f"cannot use {where}: {exc.strerror or exc}"
    home = agent_dir()
    if where == home or home in where.parents:
        return message, (
            f"the agent dir {home} must be a writable directory: fix its permissions, "
            "or set LEMON_AGENT_DIR to one"
        )
    return message, "check that the path exists and that you may write there"


def _write_crash_log() -> str:
    # Imported here, on the crash path only, to keep every command's start-up lean.
    import platform
    import traceback
    from datetime import UTC, datetime

    from lemon_skills.version import __version__

    text = (
        f"--- {datetime.now(UTC).isoformat()} lemon-skills {__version__} "
        f"Python {platform.python_version()} {sys.platform}\n{traceback.format_exc()}"
    )
    path = agent_dir() / "logs" / "lemon-crash.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        return _spare_crash_log(text, text.strip().splitlines()[-1])
    return str(path)


def _spare_crash_log(text: str, brief: str) -> str:
    """The agent dir is unwritable: a fresh file in the temp dir (never a guessable name a
    link could sit on), or, failing that, only the error's last line."""
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix="lemon-crash-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        return f"nowhere (no writable place for a log); the error was: {brief}"
    return name
