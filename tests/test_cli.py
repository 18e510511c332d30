"""The ``lemon`` entry point: commands load on first use, and one error boundary turns every
failure into an exit code and a readable line (a crash into a log, never a traceback)."""

from __future__ import annotations

import click
import pytest

from lemon_skills import cli
from lemon_skills.cli import main
from lemon_skills.errors import McpError


def failing(exc: BaseException) -> click.Command:
    @click.command()
    def boom() -> None:
        raise exc

    return boom


@pytest.mark.parametrize(
    ("exc", "code", "stderr"),
    [
        (McpError("no such server", hint="run `lemon mcp list`"), 1, "error: no such server\n"),
        (click.exceptions.Abort(), 130, "aborted\n"),
        (KeyboardInterrupt(), 130, "\naborted\n"),
        (click.UsageError("bad flag"), 2, "Usage: lemon boom [OPTIONS]\n"),
    ],
)
def test_failures_become_exit_codes_and_one_line(monkeypatch, capsys, exc, code, stderr):
    monkeypatch.setitem(cli.cli.commands, "boom", failing(exc))
    assert main(["boom"]) == code
    err = capsys.readouterr().err
    assert err.startswith(stderr) and "Traceback" not in err
    if isinstance(exc, McpError):
        assert err == "error: no such server\nhint: run `lemon mcp list`\n"
    if isinstance(exc, click.UsageError):
        assert err.endswith("Error: bad flag\n")


def test_a_crash_is_logged_with_its_traceback_and_reported_in_one_line(
    monkeypatch, capsys, agent_dir
):
    monkeypatch.setitem(cli.cli.commands, "boom", failing(ZeroDivisionError("planned")))
    assert main(["boom"]) == 3
    err = capsys.readouterr().err
    log = agent_dir / "logs" / "lemon-crash.log"
    assert err == (
        "error: unexpected internal error\n"
        f"hint: details were written to {log}; please report them\n"
    )
    text = log.read_text(encoding="utf-8")
    assert text.startswith("--- ") and "lemon-skills" in text
    assert "ZeroDivisionError: planned" in text


def test_commands_are_imported_only_when_invoked():
    assert set(cli.COMMANDS) == {"skill", "prompt", "approvals", "mcp", "state"}
    assert main(["--version"]) == 0


@pytest.mark.parametrize(
    "args",
    [["skill", "disable", "pdf"], ["skill", "enable", "pdf"], ["skill", "install", "SRC", "--yes"]],
)
def test_an_unusable_agent_dir_is_one_line_naming_it(monkeypatch, capsys, tmp_path, args):
    src = tmp_path / "src" / "pdf"
    src.mkdir(parents=True)
    (src / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs.\n---\n\nUse it.\n")
    # A regular file where the agent dir's parent should be stops every write, root's too.
    (tmp_path / "blocker").write_text("", encoding="utf-8")
    monkeypatch.setenv("LEMON_AGENT_DIR", str(tmp_path / "blocker" / "agent"))
    code = main([str(src) if a == "SRC" else a for a in args])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err and "internal error" not in err
    assert str(tmp_path / "blocker" / "agent") in err
    assert len([ln for ln in err.splitlines() if ln.startswith("error:")]) == 1


def test_a_crash_with_an_unusable_agent_dir_logs_elsewhere_briefly(monkeypatch, capsys, tmp_path):
    (tmp_path / "blocker").write_text("", encoding="utf-8")
    monkeypatch.setenv("LEMON_AGENT_DIR", str(tmp_path / "blocker" / "agent"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setitem(cli.cli.commands, "boom", failing(ZeroDivisionError("planned")))
    assert main(["boom"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 2
    [log] = (tmp_path / "tmp").glob("lemon-crash-*.log")
    assert str(log) in err and "ZeroDivisionError: planned" in log.read_text(encoding="utf-8")
