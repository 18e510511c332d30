from __future__ import annotations

from collections.abc import Iterator

import click
import pytest

from lemon_skills.cli import cli, main
from tests.helpers.skills import write_skill


def test_list_json_shows_project_skill(project, project_skills, capsys):
    write_skill(project_skills, "alpha", description="Alpha things.")
    assert main(["skill", "list", "--json", "--cwd", str(project)]) == 0
    assert '"key": "alpha"' in capsys.readouterr().out


def _leaves(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None
            yield from _leaves(sub, (*path, name))
    else:
        yield " ".join(path), cmd


def test_every_command_takes_a_cwd_that_must_exist():
    missing = []
    for name, cmd in _leaves(cli):
        opt = next((p for p in cmd.params if "--cwd" in p.opts), None)
        if opt is None or not (isinstance(opt.type, click.Path) and opt.type.exists):
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize(
    "args",
    [
        ["skill", "events"],
        ["approvals", "list"],
        ["approvals", "show", "abc"],
        ["approvals", "approve", "abc"],
        ["approvals", "deny", "abc"],
    ],
)
def test_agent_dir_commands_refuse_a_missing_cwd(args, tmp_path, agent_dir, capsys):
    assert main([*args, "--cwd", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_agent_dir_commands_accept_an_existing_cwd(project, agent_dir, capsys):
    assert main(["skill", "events", "--json", "--cwd", str(project)]) == 0
    assert main(["approvals", "list", "--json", "--cwd", str(project)]) == 0
    assert capsys.readouterr().out.split() == ["[]", "[]"]


def test_every_scoped_command_takes_project_and_global():
    scoped = {}
    for name, cmd in _leaves(cli):
        visible = {o for p in cmd.params if not getattr(p, "hidden", False) for o in p.opts}
        assert "--local" not in visible, name
        if {"--project", "--global"} & visible:
            scoped[name] = {"--project", "--global"} <= visible
    assert scoped == dict.fromkeys(
        [
            "skill curator pause",
            "skill curator resume",
            "skill curator rollback",
            "skill curator run",
            "skill curator status",
            "skill disable",
            "skill enable",
            "skill install",
            "skill uninstall",
            "skill update",
            "skill verify",
        ],
        True,
    )
