"""``lemon approvals ...``: list, inspect and decide pending operator approvals."""

from __future__ import annotations

import getpass
import json
import time

import click

from lemon_skills.approvals import default_store
from lemon_skills.approvals.records import Approval
from lemon_skills.cli._output import (
    agent_dir_cwd_option,
    colour,
    emit_json,
    json_option,
    note,
    table,
)

_STATE = {"pending": "warn", "approved": "pass", "denied": "error", "expired": "disabled"}


@click.group(invoke_without_command=True)
@click.pass_context
def approvals(ctx: click.Context) -> None:
    """Decide what agents asked permission for (installs, MCP sampling, OAuth logins).

    \b
    A waiting agent polls the approvals database under the agent dir, so a decision made
    here (from any terminal) unblocks it within a fraction of a second. With
    LEMON_DATABASE_URL set, every machine on that database sees the same approvals and a
    decision on any of them releases the waiting call (docs/team.md).
    Without a subcommand, runs `list`. IDs may be shortened to any unique prefix.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@approvals.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include decided and expired approvals.")
@agent_dir_cwd_option
@json_option
def list_cmd(show_all: bool = False, as_json: bool = False) -> None:
    """List pending approvals (every approval with --all)."""
    items = default_store().list(status=None if show_all else "pending")
    if as_json:
        emit_json([a.to_dict() for a in items])
        return
    if not items:
        note("no pending approvals" if not show_all else "no approvals recorded")
        return
    now = time.time()
    rows = [
        [a.id[:12], colour(a.status, _STATE.get(a.status)), a.tool, _when(a, now), a.rationale]
        for a in items
    ]
    table(["ID", "STATUS", "TOOL", "EXPIRES", "RATIONALE"], rows)


@approvals.command("show")
@click.argument("approval_id", metavar="ID")
@agent_dir_cwd_option
@json_option
def show(approval_id: str, as_json: bool = False) -> None:
    """Show one approval with its full action payload."""
    _render(default_store().get(approval_id), as_json)


@approvals.command("approve")
@click.argument("approval_id", metavar="ID")
@click.option("--by", default=None, help="Who decides (default: <user>@cli).")
@click.option("--reason", default=None, help="A note stored with the decision.")
@agent_dir_cwd_option
@json_option
def approve(approval_id: str, by: str | None, reason: str | None, as_json: bool = False) -> None:
    """Approve a pending request; the waiting agent continues."""
    _render(default_store().approve(approval_id, by=by or _operator(), reason=reason), as_json)


@approvals.command("deny")
@click.argument("approval_id", metavar="ID")
@click.option("--by", default=None, help="Who decides (default: <user>@cli).")
@click.option("--reason", default=None, help="A note stored with the decision.")
@agent_dir_cwd_option
@json_option
def deny(approval_id: str, by: str | None, reason: str | None, as_json: bool = False) -> None:
    """Deny a pending request; the waiting agent gets a refusal."""
    _render(default_store().deny(approval_id, by=by or _operator(), reason=reason), as_json)


def _render(approval: Approval, as_json: bool) -> None:
    data = approval.to_dict()
    if as_json:
        emit_json(data)
        return
    for key in ("id", "status", "tool", "rationale", "run_id", "session_key", "agent_id"):
        if data[key] is not None:
            value = colour(data[key], _STATE.get(data[key])) if key == "status" else data[key]
            click.echo(f"{key + ':':13}{value}")
    for key in ("created_at", "expires_at", "decided_at", "decided_by", "reason"):
        if data[key] is not None:
            click.echo(f"{key + ':':13}{data[key]}")
    click.echo("action:")
    click.echo(json.dumps(data["action"], indent=2, ensure_ascii=False, sort_keys=True))


def _when(approval: Approval, now: float) -> str:
    if not approval.pending:
        return "-"
    left = int(approval.expires_at - now)
    return f"in {left // 60}m{left % 60:02d}s" if left >= 60 else f"in {max(left, 0)}s"


def _operator() -> str:
    try:
        return f"{getpass.getuser()}@cli"
    except (KeyError, OSError):
        return "cli"
