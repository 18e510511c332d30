"""The ``lemon`` command line: one error boundary, lazily imported command groups.

Command groups live one per module or package (``cli/skill/``, ``cli/mcp/``...) and are
imported only when invoked, so ``lemon skill find`` never pays for the MCP SDK's import time.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

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
    try:
        try:
            rv = cli.main(
                args=list(argv) if argv is not None else None,
                prog_name="lemon",
                standalone_mode=False,
            )
        finally:
            _report_unreadable_state()
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
    except Exception:  # the CLI boundary: anything unexpected is logged, never a raw traceback
        log = _write_crash_log()
        _error("unexpected internal error", f"details were written to {log}; please report them")
        return 3
    return rv if isinstance(rv, int) else 0


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
    registry = sys.modules.get("lemon_skills.skills.registry")
    if registry is None:  # the command never looked at skills
        return
    for d in registry.default_registry().state_problems():
        click.secho(f"warning: {d.path}: {d.reason}", err=True, fg="yellow")


def _error(message: str, hint: str | None) -> None:
    click.secho(f"error: {message}", err=True, fg="red")
    if hint:
        click.echo(f"hint: {hint}", err=True)


def _write_crash_log() -> str:
    # Imported here, on the crash path only, to keep every command's start-up lean.
    import platform
    import traceback
    from datetime import UTC, datetime

    from lemon_skills import __version__

    path = agent_dir() / "logs" / "lemon-crash.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(
                f"--- {datetime.now(UTC).isoformat()} lemon-skills {__version__} "
                f"Python {platform.python_version()} {sys.platform}\n"
            )
            fh.write(traceback.format_exc())
    except OSError:
        return "<unwritable log; traceback follows>\n" + traceback.format_exc()
    return str(path)
