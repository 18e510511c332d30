"""``lemon skill ...``: list, inspect, enable and lint skills."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from lemon_skills.cli._lazy import LazyGroup
from lemon_skills.cli._output import (
    agent_option,
    colour,
    cwd_option,
    emit_json,
    emit_json_records,
    json_option,
    note,
    scope_options,
    table,
    warn,
)
from lemon_skills.paths import Scope
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.format.model import Entry

if TYPE_CHECKING:
    from lemon_skills.skills.api import Toggled

#: ``lemon skill`` subcommands living in their own modules, imported only when used.
SUBCOMMANDS: dict[str, str] = {
    "curator": "lemon_skills.cli.skill.curator:curator",
    "eval": "lemon_skills.cli.skill.find:eval_cmd",
    "events": "lemon_skills.cli.skill.usage:events_cmd",
    "find": "lemon_skills.cli.skill.find:find_cmd",
    "index": "lemon_skills.cli.skill.find:index_cmd",
    "install": "lemon_skills.cli.skill.install:install_cmd",
    "uninstall": "lemon_skills.cli.skill.install:uninstall_cmd",
    "update": "lemon_skills.cli.skill.install:update_cmd",
    "usage": "lemon_skills.cli.skill.usage:usage_cmd",
    "verify": "lemon_skills.cli.skill.install:verify_cmd",
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS, invoke_without_command=True)
@click.pass_context
def skill(ctx: click.Context) -> None:
    """Find, inspect, enable and lint skills (SKILL.md folders).

    \b
    Skills are found in, first match wins:
      <cwd>/.lemon/skill/<key>/   then .agents/skills/ in cwd and parents up to the git root
      $LEMON_AGENT_DIR/skill/<key>/ (default ~/.lemon/agent)   then ~/.agents/skills/
    Without a subcommand, runs `list`.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@skill.command("list")
@cwd_option
@json_option
@click.option(
    "--diagnostics",
    "show_diags",
    is_flag=True,
    help="Also show every file that failed to load and every shadowed skill.",
)
@agent_option
@click.option(
    "--by-bundle",
    is_flag=True,
    help="Group by the plugin, extension or rules folder each skill came from.",
)
def list_cmd(
    cwd: Path | None = None,
    as_json: bool = False,
    show_diags: bool = False,
    agent: str | None = None,
    by_bundle: bool = False,
) -> None:
    """List every visible skill, disabled ones included."""
    # Straight to the registry: the facade module would import ranking for nothing.
    from lemon_skills.paths import resolve_cwd
    from lemon_skills.skills.catalog.registry import default_registry

    v = default_registry().view(resolve_cwd(cwd))
    entries = v.entries
    if agent is not None:
        from lemon_skills.skills.selection import profiles

        entries = tuple(profiles.keep(entries, profiles.select(v.enablement.profiles, agent)))
    if by_bundle:
        entries = tuple(sorted(entries, key=_bundle_label))
    if as_json:
        emit_json_records(
            entries, {"diagnostics": [d.to_dict() for d in v.diagnostics]} if show_diags else None
        )
        return
    rows = [
        [
            e.key,
            e.source,
            colour("enabled" if e.enabled else "disabled", "active" if e.enabled else "disabled"),
            e.description,
        ]
        for e in entries
    ]
    if by_bundle:
        rows = [[_bundle_label(e), *row] for e, row in zip(entries, rows, strict=True)]
    rows += [["-", *row] if by_bundle else row for row in _invalid_rows(v)]
    if rows:
        headers = ["KEY", "SOURCE", "STATE", "DESCRIPTION"]
        table(["BUNDLE", *headers] if by_bundle else headers, rows)
    else:
        from lemon_skills.cli.skill.served import skills_off

        note("no skills found; create one in .lemon/skill/<key>/SKILL.md")
        for line in skills_off(cwd):
            note(line)
    problems = [d for d in v.diagnostics if d.level != "info"]
    if show_diags:
        for d in v.diagnostics:
            click.echo(colour(str(d), d.level))
    elif problems:
        # A listed skill's own problem (no name, no description) is named here: the row alone
        # reads as a healthy skill.
        for d in [d for d in problems if d.key in v.by_key][:_NAMED_PROBLEMS]:
            warn(" ".join(f"{d.key}: {d.reason}".split()))  # one line, whatever the key holds
        note(f"{len(problems)} problem(s) while loading; see `lemon skill list --diagnostics`")


#: Problems of listed skills named under the table (the rest only counted).
_NAMED_PROBLEMS = 5


#: Diagnostics about a skill directory that is not a skill (the others concern visible skills).
_NOT_A_SKILL = ("shadowed", "duplicate", "corrupt_state")


def _invalid_rows(v: registry.View) -> list[list[str]]:
    """One row per skill directory that failed to load, with the reason: never offered."""
    rows = []
    for d in v.diagnostics:
        if d.level == "error" and d.key and d.key not in v.by_key and d.code not in _NOT_A_SKILL:
            under_cwd = v.cwd is not None and d.path.is_relative_to(v.cwd)
            source = "project" if under_cwd else "global"
            rows.append([d.key, source, colour("invalid", "error"), d.reason])
    return rows


def _bundle_label(e: Entry) -> str:
    b = e.bundle
    if b is None:
        return "-"
    return f"{b.name}@{b.marketplace} ({b.kind})" if b.marketplace else f"{b.name} ({b.kind})"


@skill.command("show")
@click.argument("key")
@cwd_option
@json_option
def show(key: str, cwd: Path | None = None, as_json: bool = False) -> None:
    """Print a skill's SKILL.md (or its metadata with --json)."""
    from lemon_skills.skills import api
    from lemon_skills.skills.selection import activation

    entry = registry.require(key, cwd=cwd)
    if as_json:
        data = entry.to_dict()
        data["body"] = entry.body
        data["manifest"] = dict(entry.manifest.raw)
        data["activation"] = {
            "kind": activation.activation(entry),
            "description": activation.describe(entry),
            "paths": list(entry.paths),
        }
        emit_json(data)
        return
    note(f"# {entry.key} ({entry.source}) {entry.skill_file}")
    note(f"# activates: {activation.describe(entry)}")
    if entry.bundle is not None:
        note(f"# from: {_bundle_label(entry)} at {entry.bundle.root}")
    click.echo(entry.content())


@skill.command("status")
@click.argument("key")
@cwd_option
@json_option
def status(key: str, cwd: Path | None = None, as_json: bool = False) -> None:
    """Show whether a skill is ready: platform, binaries, env vars, config, disabled."""
    from lemon_skills.skills import api

    if not as_json:
        registry.require(key, cwd=cwd)  # an unknown key is an `error:` line with close matches
    st = api.status(key, cwd=cwd)
    if as_json:
        emit_json(st.to_dict())
    else:
        click.echo(f"{key}: {colour(st.activation_state)}")
        for field in (
            "missing_bins",
            "missing_any_bins",
            "missing_env",
            "missing_config",
            "missing_skills",
            "missing_any_skills",
            "missing_mcp_servers",
        ):
            values = getattr(st, field)
            if values:
                click.echo(f"  {field.replace('_', ' ')}: {', '.join(values)}")
        if st.error:
            click.echo(f"  {st.error}")
    if st.error:
        from lemon_skills.errors import SkillNotFound

        try:
            registry.require(key, cwd=cwd)
        except SkillNotFound as exc:  # the status above already said so; add what to do
            note(f"hint: {exc.hint}")
        raise click.exceptions.Exit(1)


def _toggle(key: str, enabled: bool, cwd: Path | None, scope: Scope, as_json: bool) -> None:
    from lemon_skills.cli.skill.served import namespace_key
    from lemon_skills.skills import api

    key = namespace_key(key, cwd, enabling=enabled)
    done = api.toggle(key, enabled, cwd=cwd, scope=scope)
    # What still keeps it off after enabling: the key or its namespace in either scope.
    blocks = registry.view(cwd).enablement.disabled_by(key) if enabled else []
    if as_json:
        data = done.to_dict()
        data["still_disabled_in"] = list(dict.fromkeys(b.scope for b in blocks))
        data["still_disabled_by"] = [b.to_dict() for b in blocks]
        emit_json(data)
    else:
        for line in _toggle_lines(done):
            click.echo(line)
    for b in blocks:
        why = "" if b.key == key else f" by its namespace {b.key}"
        warn(f"{key} is still disabled{why} in the {b.scope} scope; run `{b.command}`")


def _toggle_lines(done: Toggled) -> list[str]:
    """What a toggle changed, one line per setting."""
    word = "enabled" if done.enabled else "disabled"
    unchanged = "" if done.changed else " (no change)"
    lines = [f"{done.key}: {word} in {done.scope} scope{unchanged}"]
    if done.server is None:
        return lines
    listed = "no longer disabled" if done.enabled else "disabled"
    lines.append(
        f"  every skill keyed {done.key}: {listed}" + ("" if done.listed else " (no change)")
    )
    switched = "switched on" if done.enabled else "switched off"
    known = "" if done.server_configured is not False else "; no server of that name is configured"
    lines.append(
        f"  skills of MCP server {done.server!r}: {switched}"
        + ("" if done.switch else " (no change)")
        + known
    )
    return lines


@skill.command("enable")
@click.argument("key")
@cwd_option
@scope_options("global")
@json_option
def enable(key: str, scope: Scope, cwd: Path | None = None, as_json: bool = False) -> None:
    """Enable a skill (removes it from the scope's skills.json disabled list).

    KEY is one skill, or PREFIX:* for every skill of a plugin, an MCP server (whose skills are
    then fetched) or the Cursor rules (cursor:*).
    """
    _toggle(key, True, cwd, scope, as_json)


@skill.command("disable")
@click.argument("key")
@cwd_option
@scope_options("global")
@json_option
def disable(key: str, scope: Scope, cwd: Path | None = None, as_json: bool = False) -> None:
    """Disable a skill: it stays on disk but is never offered to the agent.

    KEY is one skill, or PREFIX:* for every skill of a plugin, an MCP server or the Cursor
    rules, ones that appear later included.
    """
    _toggle(key, False, cwd, scope, as_json)


@skill.command("refresh")
@cwd_option
@json_option
def refresh(cwd: Path | None = None, as_json: bool = False) -> None:
    """Reload every skill from disk (the registry also notices changes by itself)."""
    from lemon_skills.skills import api

    api.refresh(cwd=cwd)
    v = registry.view(cwd)
    if as_json:
        emit_json({"skills": len(v.entries), "diagnostics": len(v.diagnostics)})
        return
    click.echo(f"{len(v.entries)} skills loaded, {len(v.diagnostics)} diagnostics")


@skill.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@cwd_option
@json_option
@click.option(
    "--strict", is_flag=True, help="Treat lemon-only fields as errors (pure Agent Skills spec)."
)
def lint(
    paths: tuple[Path, ...], cwd: Path | None = None, as_json: bool = False, strict: bool = False
) -> None:
    """Check SKILL.md files against the Agent Skills spec and lemon's rules.

    PATHS may be SKILL.md files, skill directories, or any directory: it is searched for skill
    directories at any depth, entering hidden folders only for the project skill roots
    .lemon/skill and .agents/skills. Exits 1 when any error is found.
    """
    from lemon_skills.errors import LemonSkillsError
    from lemon_skills.skills.format.lint import lint_file, skill_files

    base = cwd or Path.cwd()
    reports = [lint_file(p, strict=strict) for p in skill_files(base / p for p in paths)]
    if not reports:
        raise LemonSkillsError(
            "no SKILL.md found in " + ", ".join(str(p) for p in paths),
            hint="pass SKILL.md files, skill directories (holding a SKILL.md) or directories "
            "that hold skill directories",
        )
    if as_json:
        emit_json([r.to_dict() for r in reports])
    else:
        for r in reports:
            click.echo(f"{r.path}: {colour('ok', 'pass') if r.ok else colour('error')}")
            for f in r.findings:
                where = f":{f.line}" if f.line else ""
                click.echo(f"  {colour(f.severity)}{where} [{f.rule}] {f.message}")
    if any(not r.ok for r in reports):
        raise click.exceptions.Exit(1)


@skill.command("doctor")
@click.argument("key", required=False)
@cwd_option
@json_option
def doctor(key: str | None = None, cwd: Path | None = None, as_json: bool = False) -> None:
    """Explain why a skill (or every skill) is or is not active."""
    from lemon_skills.skills.catalog.doctor import doctor as run_doctor

    reports = run_doctor(key, cwd=cwd)
    if as_json:
        emit_json([r.to_dict() for r in reports])
        return
    if not reports:
        note("no skills found; create one in .lemon/skill/<key>/SKILL.md")
    for r in reports:
        click.echo(f"{click.style(r.key, bold=True)}: {colour(r.state)}")
        for reason in r.reasons:
            click.echo(f"  - {reason}")
    if key is not None and reports and reports[0].state == "missing":
        raise click.exceptions.Exit(1)
