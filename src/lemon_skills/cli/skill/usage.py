"""``lemon skill events`` and ``lemon skill usage``: what agents loaded and wrote, and when."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lemon_skills.cli._output import (
    agent_dir_cwd_option,
    colour,
    cwd_option,
    emit_json,
    json_option,
    note,
    table,
)
from lemon_skills.paths import Scope, resolve_cwd
from lemon_skills.skills.usage.store import DEFAULT_ARCHIVE_DAYS, DEFAULT_STALE_DAYS, UsageStore

if TYPE_CHECKING:
    from lemon_skills.introspection import EventRow

_KINDS = ("load", "write", "prompt_render")


def _since(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    from lemon_skills.introspection import parse_since

    try:
        return parse_since(value, now=time.time())
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("events")
@click.option(
    "--since", callback=_since, help="Only newer events: 30m, 12h, 7d, 2w or an ISO time."
)
@click.option("--key", help="Only events of this skill.")
@click.option(
    "--type",
    "kinds",
    multiple=True,
    type=click.Choice(_KINDS),
    help="Only this kind of event (repeatable).",
)
@click.option("--limit", default=200, show_default=True, type=click.IntRange(1), help="Newest N.")
@agent_dir_cwd_option
@json_option
def events_cmd(
    since: float | None = None,
    key: str | None = None,
    kinds: tuple[str, ...] = (),
    limit: int = 200,
    as_json: bool = False,
) -> None:
    """List recorded skill events (loads, writes, prompt renders), oldest first.

    Events live in $LEMON_AGENT_DIR/introspection.db; they carry keys, views, actions, results
    and run/session ids, never skill text.
    """
    from lemon_skills.introspection import default_store

    types = [f"skill_{k}_observed" for k in kinds]
    rows = default_store().query(since=since, key=key, types=types, limit=limit)
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        note("no skill events recorded yet")
        return
    table(
        ["TIME", "EVENT", "KEY", "RESULT", "SESSION", "DETAIL"],
        [
            [
                r.recorded_at,
                r.type.removeprefix("skill_").removesuffix("_observed"),
                r.key or "-",
                colour(r.result or "-"),
                r.session_key or "-",
                _detail(r),
            ]
            for r in rows
        ],
    )


def _detail(r: EventRow) -> str:
    p: dict[str, Any] = dict(r.payload)
    if r.type == "skill_write_observed":
        bits = [str(p.get("action", "")), str(p.get("file_path", "")), str(p.get("reason", ""))]
    elif r.type == "skill_load_observed":
        bits = [f"view={p.get('view', 'full')}", str(p.get("section", p.get("file_path", "")))]
    else:
        bits = [f"{p.get('skill_count', 0)} skills", f"{p.get('omitted_count', 0)} omitted"]
    return " ".join(b for b in bits if b)


@click.command("usage")
@cwd_option
@click.option(
    "--scope",
    type=click.Choice(["all", "global", "project"]),
    default="all",
    show_default=True,
    help="Which sidecar to report.",
)
@click.option(
    "--stale-after-days",
    default=DEFAULT_STALE_DAYS,
    show_default=True,
    type=click.IntRange(1),
    help="Idle days after which an agent-authored skill is a stale candidate.",
)
@click.option(
    "--archive-after-days",
    default=DEFAULT_ARCHIVE_DAYS,
    show_default=True,
    type=click.IntRange(1),
    help="Idle days after which it is an archive candidate.",
)
@json_option
def usage_cmd(
    cwd: Path | None = None,
    scope: str = "all",
    stale_after_days: int = DEFAULT_STALE_DAYS,
    archive_after_days: int = DEFAULT_ARCHIVE_DAYS,
    as_json: bool = False,
) -> None:
    """Report skill usage: loads, writes, idle days, stale and archive candidates.

    Candidates are agent-authored skills idle for the given days (pinned and archived ones are
    never candidates). Reads skills.usage.json of the agent dir and of <cwd>/.lemon.
    """
    from lemon_skills.skills.usage.report import store_report

    scopes: list[Scope] = ["global", "project"] if scope == "all" else [scope]  # type: ignore[list-item]
    where = resolve_cwd(cwd)
    rows = [
        {"scope": s, **r.to_dict(), "markers": r.markers()}
        for s in scopes
        for r in store_report(
            UsageStore.for_scope(s, where),
            stale_after_days=stale_after_days,
            archive_after_days=archive_after_days,
        )
    ]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        note("no skill usage recorded yet")
        return
    table(
        ["SKILL", "SCOPE", "STATE", "LOADS", "WRITES", "IDLE", "LAST ACTIVITY"],
        [
            [
                r["name"],
                r["scope"],
                _markers(r["markers"]),
                str(r["load_count"]),
                str(r["write_count"]),
                "?" if r["idle_days"] is None else f"{r['idle_days']}d",
                r["last_activity_at"] or "never",
            ]
            for r in rows
        ],
    )


def _markers(markers: list[str]) -> str:
    return ", ".join(colour(m, "stale" if m.endswith("candidate") else m) for m in markers)
