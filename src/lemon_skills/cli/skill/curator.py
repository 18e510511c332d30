"""``lemon skill curator``: status, run, pause, resume and rollback of the skill curator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from lemon_skills.cli._output import (
    colour,
    cwd_option,
    emit_json,
    json_option,
    note,
    scope_options,
    table,
)
from lemon_skills.paths import Scope
from lemon_skills.skills.curator import control as api
from lemon_skills.skills.curator.plan import DEFAULT_GRACE_DAYS, Thresholds
from lemon_skills.skills.curator.report import rollback_command
from lemon_skills.skills.usage.store import DEFAULT_ARCHIVE_DAYS, DEFAULT_STALE_DAYS

F = TypeVar("F", bound=Callable[..., Any])


def _scope_options(f: F) -> F:
    # --local was this group's spelling of --project before every command took --project.
    return scope_options("global", legacy_project="--local")(json_option(cwd_option(f)))


def _threshold_options(f: F) -> F:
    for name, default, text in (
        ("--grace-days", DEFAULT_GRACE_DAYS, "Leave never-used skills alone this long."),
        ("--archive-after-days", DEFAULT_ARCHIVE_DAYS, "Archive after this many idle days."),
        ("--stale-after-days", DEFAULT_STALE_DAYS, "Mark stale after this many idle days."),
    ):
        f = click.option(
            name, default=default, show_default=True, type=click.IntRange(1), help=text
        )(f)
    return f


@click.group("curator")
def curator() -> None:
    """Curate agent-authored skills: stale after 30 idle days, archived after 90.

    \b
    Only skills an agent created move; pinned and user skills are never touched and nothing
    is ever deleted. Archived skills are disabled in skills.json and every real run that
    changes something keeps a snapshot, so `lemon skill curator rollback` undoes it.
    """


@curator.command("status")
@_scope_options
@_threshold_options
def status_cmd(scope: Scope, cwd: Path | None, as_json: bool, **days: int) -> None:
    """Show the curator's state, pending changes and the skills it watches.

    Pending changes are what a pass would do now; agent-authored skills are listed with
    their lifecycle state, counters and idle days.
    """
    st = api.status(scope, cwd, thresholds=Thresholds(**days))
    if as_json:
        emit_json(st.to_dict())
        return
    s = st.state
    click.echo(f"curator: {colour('paused', 'stale') if s.paused else colour('enabled', 'active')}")
    click.echo(f"interval: {s.interval_hours} h")
    click.echo(f"runs: {s.run_count}")
    click.echo(
        f"last run: {s.last_run_at or 'never'}" + (f" ({s.last_run_id})" if s.last_run_id else "")
    )
    click.echo(f"last summary: {s.last_run_summary or '(none)'}")
    click.echo(f"last run candidates: {s.last_candidate_count}")
    click.echo(f"pending now: {len(st.pending)}")
    if st.next_pass_at:
        click.echo(f"next automatic pass: not before {st.next_pass_at}")
    if s.last_report_path:
        click.echo(f"last report: {s.last_report_path}")
    for t in st.pending:
        click.echo(f"  next pass would move {t.name}: {t.from_state} -> {t.to_state} ({t.reason})")
    for h in st.held:
        click.echo(f"  next pass holds {h.name}: {h.detail}")
    _skills_table(st)


@curator.command("run")
@_scope_options
@_threshold_options
@click.option("--prompt", "show_prompt", is_flag=True, help="Also print the agent review prompt.")
@click.option("--dry-run", is_flag=True, help="Write nothing; print what would change.")
def run_cmd(
    scope: Scope, cwd: Path | None, as_json: bool, show_prompt: bool, dry_run: bool, **days: int
) -> None:
    """Run one curator pass now and write its report.

    An explicit run ignores pause and interval. --dry-run shows the same plan and writes
    nothing; otherwise the report lands in logs/curator/<run>/ (run.json, REPORT.md).
    """
    result = api.run(scope, cwd, thresholds=Thresholds(**days), dry_run=dry_run)
    doc = dict(result.document)
    if as_json:
        extra = {"report_path": str(result.report_path) if result.report_path else None}
        emit_json(
            {**doc, **extra, **({"review_prompt": result.review_prompt} if show_prompt else {})}
        )
        return
    _run_text(doc, result.report_path)
    if show_prompt:
        click.echo("--- Curator review prompt ---")
        click.echo(result.review_prompt)
    else:
        note("Pass --prompt to print the agent review prompt.")


@curator.command("pause")
@_scope_options
def pause_cmd(scope: Scope, cwd: Path | None, as_json: bool) -> None:
    """Pause automatic passes (an explicit `run` still works)."""
    state = api.set_paused(True, scope, cwd)
    if as_json:
        emit_json(state.to_dict())
    else:
        click.echo("curator: paused")


@curator.command("resume")
@_scope_options
@click.option("--interval-hours", type=click.IntRange(1), help="Also set the automatic interval.")
def resume_cmd(scope: Scope, cwd: Path | None, as_json: bool, interval_hours: int | None) -> None:
    """Resume automatic passes."""
    state = api.set_paused(False, scope, cwd, interval_hours=interval_hours)
    if as_json:
        emit_json(state.to_dict())
    else:
        click.echo(f"curator: resumed (every {state.interval_hours} h)")


@curator.command("rollback")
@click.argument("run_id", metavar="[RUN]", required=False)
@_scope_options
@click.option("--dry-run", is_flag=True, help="Write nothing; print what would be restored.")
@click.option("--no-pause", is_flag=True, help="Do not pause the curator afterwards.")
def rollback_cmd(
    run_id: str | None, scope: Scope, cwd: Path | None, as_json: bool, dry_run: bool, no_pause: bool
) -> None:
    """Undo a curator run (by default the latest one).

    Restores the lifecycle states and skills.json entries the run changed.

    RUN defaults to the latest run that changed something and is not rolled back yet. Skills
    moved since the run are left as they are now. The curator is paused afterwards so the
    next automatic pass does not redo the run (`resume` to continue).
    """
    res = api.rollback(scope, cwd, run_id, dry_run=dry_run, pause=not no_pause)
    if as_json:
        emit_json(res.to_dict())
        return
    verb = "would restore" if res.dry_run else "restored"
    click.echo(f"run {res.run_id}: {verb} {', '.join(res.restored) or 'nothing'}")
    if res.reenabled:
        click.echo(f"re-enabled in skills.json: {', '.join(res.reenabled)}")
    for name, reason in res.skipped:
        click.echo(f"kept {name}: {reason}")
    if res.paused:
        note("curator paused; `lemon skill curator resume` to continue automatic passes")


def _skills_table(st: api.CuratorStatus) -> None:
    if not st.rows:
        note(f"no agent-authored {st.scope} skills have usage records yet")
        return
    table(
        ["SKILL", "STATE", "LOADS", "WRITES", "IDLE", "LAST ACTIVITY"],
        [
            [
                r.name,
                ", ".join(
                    colour(m, "stale" if "candidate" in m else m)
                    for m in r.review_markers().split(",")
                ),
                str(r.load_count),
                str(r.write_count),
                "?" if r.idle_days is None else f"{r.idle_days}d",
                r.last_activity_at or "never",
            ]
            for r in st.rows
        ],
    )


def _run_text(doc: dict[str, Any], report_path: Path | None) -> None:
    dry = doc["dry_run"]
    if dry:
        note("dry run: nothing was written")
    click.echo(f"curator: {doc['summary']}")
    click.echo(f"candidates: {doc['candidate_count']}")
    for t in doc["state_transitions"]:
        prefix = "would move" if dry else "moved"
        click.echo(f"  {prefix} {t['name']}: {t['from']} -> {t['to']} ({t['reason']})")
    for h in doc["held"]:
        click.echo(f"  held {h['name']}: {h['detail']}")
    if report_path is not None:
        click.echo(f"report: {report_path.parent / 'REPORT.md'}")
    if doc.get("snapshot"):
        click.echo(f"undo: {rollback_command(doc)}")
