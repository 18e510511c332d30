from __future__ import annotations

import click
from click.testing import CliRunner

from lemon_skills.cli._lazy import LazyGroup


@click.command()
@click.argument("who")
def hello(who: str) -> None:
    """Say hello."""
    click.echo(f"hello {who}")


def _group():
    @click.group(cls=LazyGroup, lazy={"hello": f"{__name__}:hello"})
    def root() -> None:
        """Root."""

    @root.command()
    def eager() -> None:
        """Eager."""
        click.echo("eager ran")

    return root


def test_lazy_and_eager_commands_are_listed_together_in_order():
    result = CliRunner().invoke(_group(), ["--help"])
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.output.split("Commands:")[1].strip().splitlines()]
    assert listed == ["eager", "hello"]


def test_a_lazy_command_is_imported_and_run_when_named():
    runner = CliRunner()
    assert runner.invoke(_group(), ["hello", "world"]).output == "hello world\n"
    assert runner.invoke(_group(), ["eager"]).output == "eager ran\n"


def test_an_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(_group(), ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output
