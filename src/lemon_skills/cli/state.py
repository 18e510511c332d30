"""``lemon state ...``: where approvals, pins, usage and events live, and moving them."""

from __future__ import annotations

from pathlib import Path

import click

from lemon_skills import state
from lemon_skills.cli._output import (
    agent_dir_cwd_option,
    emit_json,
    json_option,
    note,
    project_option,
    table,
)
from lemon_skills.paths import agent_dir, resolve_cwd
from lemon_skills.skills.usage.store import usage_path
from lemon_skills.state.config import check_url
from lemon_skills.state.identity import project_key
from lemon_skills.state.migrate import copy_local


@click.group()
def state_group() -> None:
    """Where approvals, MCP tool pins, skill usage and events are kept.

    \b
    Embedded (default): files under the agent dir, for one machine.
    Shared: LEMON_DATABASE_URL=postgresql://USER@HOST:PORT/DB on every machine of a team
    (needs `pip install 'lemon-skills[postgres]'`; see docs/team.md).
    \b
      lemon state status                       backend, schema version, row counts
      lemon state migrate --to postgresql://…  copy this machine's files into the database
    """


@state_group.command("status")
@agent_dir_cwd_option
@json_option
def status(as_json: bool = False) -> None:
    """Show the backend in use, its URL (without password), schema version and row counts."""
    report = state.backend().status()
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(f"backend:        {report.backend}")
    if report.url:
        click.echo(f"url:            {report.url}")
    click.echo(f"schema version: {report.schema_version}")
    table(["STATE", "ROWS"], [[name, str(n)] for name, n in report.counts.items()])


@state_group.command("migrate")
@click.option(
    "--to",
    "url",
    required=True,
    metavar="URL",
    help="The database to copy into (postgresql://USER@HOST:PORT/DB).",
)
@project_option("Also copy this project's skill usage (default: the current directory).")
@json_option
def migrate(url: str, cwd: Path | None = None, as_json: bool = False) -> None:
    """Copy this machine's approvals, pins, usage and events into a shared database.

    Safe to run again: what was copied before is not copied twice. The local files are only
    read. Afterwards set LEMON_DATABASE_URL to the same URL to use the database.
    """
    check_url(url)
    project = resolve_cwd(cwd)
    sidecars = {"global": usage_path("global")}
    local = usage_path("project", project)
    if local.exists():
        sidecars["project:" + project_key(project)] = local
    db = state.open_database(url)
    copied = copy_local(db, agent=agent_dir(), sidecars=sidecars)
    if as_json:
        emit_json({"url": db.display_url, "copied": copied.to_dict()})
        return
    rows = [[name, str(getattr(copied, name))] for name in ("approvals", "pins", "usage", "events")]
    table(["COPIED", "ROWS"], rows)
    for item in copied.pin_conflicts:
        note(f"pin conflict: {item} is pinned differently in the database (kept; it stays held)")
    for item in copied.skipped:
        note(f"skipped {item}")
    note(f"copied into {db.display_url}; set LEMON_DATABASE_URL to use it")
