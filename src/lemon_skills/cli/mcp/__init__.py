"""``lemon mcp ...``: configured MCP servers, their status, tools, resources and prompts.

The group and the commands that only read the configuration live here; the commands that
connect (``servers``), list what servers offer (``listing``), serve skills (``serve``) and run
the smoke proofs (``smoke``) are imported only when used.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from lemon_skills.cli._lazy import LazyGroup
from lemon_skills.cli._output import colour, emit_json, json_option, note, project_option, table
from lemon_skills.paths import resolve_cwd

#: ``lemon mcp`` subcommands living in their own modules, imported only when used.
SUBCOMMANDS: dict[str, str] = {
    "approve-changes": "lemon_skills.cli.mcp.servers:approve_changes_cmd",
    "call": "lemon_skills.cli.mcp.servers:call_cmd",
    "eval": "lemon_skills.cli.toolsearch:eval_cmd",
    "gateway": "lemon_skills.cli.mcp.gateway:gateway_cmd",
    "logs": "lemon_skills.cli.mcp.servers:logs_cmd",
    "prompts": "lemon_skills.cli.mcp.listing:prompts_cmd",
    "refresh-skills": "lemon_skills.cli.mcp.refresh:refresh_skills_cmd",
    "resources": "lemon_skills.cli.mcp.listing:resources_cmd",
    "serve": "lemon_skills.cli.mcp.serve:serve_cmd",
    "smoke": "lemon_skills.cli.mcp.smoke:smoke_cmd",
    "status": "lemon_skills.cli.mcp.servers:status_cmd",
    "tools": "lemon_skills.cli.mcp.listing:tools_cmd",
    "trust": "lemon_skills.cli.mcp.trust:trust_cmd",
}

server_option = click.option("--server", "server", default=None, help="Only this server.")
cwd_option = project_option(
    "Project directory whose .lemon/mcp.json is merged over the global mcp.json "
    "(default: current dir)."
)


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS, invoke_without_command=True)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """MCP servers as tool sources: list, status, tools, call, resources, prompts.

    \b
    Servers come from, highest precedence first:
      lemon_skills.configure(mcp_servers=...)   (in code)
      $LEMON_MCP_SERVERS                         (JSON array or {"mcpServers": {...}})
      <cwd>/.lemon/mcp.json                      (project; {"enabled", "servers": [...]})
      $LEMON_AGENT_DIR/mcp.json                  (global, default ~/.lemon/agent)
    A project's servers start only once you trust its file (`lemon mcp trust`).
    LEMON_MCP_DISABLED=1 turns MCP off. Without a subcommand, runs `list`.
    """
    # The SDK logs every unparsable server line with a traceback; status shows the count.
    sdk_log = logging.getLogger("mcp")
    sdk_log.addHandler(logging.NullHandler())
    sdk_log.propagate = False
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@mcp.command("list")
@cwd_option
@json_option
def list_cmd(cwd: Path | None = None, as_json: bool = False) -> None:
    """List the configured servers (without connecting to them).

    STATE is what applies here: `enabled`, `disabled` (the entry's own "enabled": false) or
    `off (mcp disabled)` when MCP is switched off for this directory (the reason is on stderr).
    """
    from lemon_skills.mcp.config.resolve import load
    from lemon_skills.mcp.session.logs import redact

    resolved = load(resolve_cwd(cwd), notify=False)
    refuse_broken_files(resolved)
    if as_json:
        emit_json(
            {
                "enabled": resolved.enabled,
                "disabled_reason": resolved.disabled_reason,
                "servers": resolved.server_dicts(),
                "overridden": [s.to_dict() for s in resolved.overridden],
                "errors": [i.to_dict() for i in resolved.issues],
                "project_trust": resolved.trust.to_dict() if resolved.trust else None,
            }
        )
        return
    if not resolved.enabled:
        note(f"MCP is off here: {resolved.disabled_reason}")
    rows = [
        [s.name or "", s.transport, s.origin, _state(resolved.state_of(s)), redact(s.target)]
        for s in resolved.servers
    ]
    table(["NAME", "TRANSPORT", "SOURCE", "STATE", "TARGET"], rows)
    if not rows:
        note("no MCP servers configured (see `lemon mcp --help`)")
    untrusted = resolved.untrusted_notice()
    if untrusted is not None:
        note(untrusted)
    print_issues(resolved.issues)


@mcp.command("validate")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@cwd_option
@json_option
def validate_cmd(file: Path | None = None, cwd: Path | None = None, as_json: bool = False) -> int:
    """Check FILE (an mcp.json), or every config source of --cwd; exit 1 on any error.

    A stdio command naming no executable (not on PATH, not a file) is an error. Warnings
    (unknown keys, a command with its arguments in it, no servers at all) are printed too
    but do not change the exit status.
    """
    from lemon_skills.mcp.config.entries import ConfigIssue
    from lemon_skills.mcp.config.lint import MISSING_EXECUTABLE, lint_file, lint_sources
    from lemon_skills.mcp.config.resolve import load, read_document
    from lemon_skills.mcp.session.logs import redact

    if file is not None:
        if not file.exists():
            raise click.BadParameter(f"{file} does not exist", param_hint="FILE")
        base = file.parent.absolute()
        _enabled, servers, issues = read_document(file, "file", base)
        warnings = lint_file(file, "file", base)
    else:
        where = resolve_cwd(cwd)
        resolved = load(where, notify=False)
        servers, issues = list(resolved.servers), list(resolved.issues)
        warnings = lint_sources(where)
        if not servers and not issues and not warnings:
            warnings = [
                ConfigIssue(reason="no MCP servers are configured (see `lemon mcp --help`)")
            ]
    missing = [w for w in warnings if w.reason.startswith(MISSING_EXECUTABLE)]
    issues += missing
    warnings = [w for w in warnings if w not in missing]
    unusable = {w.entry.get("command") for w in missing if isinstance(w.entry, dict)}
    servers = [s for s in servers if getattr(s, "command", None) not in unusable]
    if as_json:
        emit_json(
            {
                "valid": [s.name for s in servers],
                "errors": [i.to_dict() for i in issues],
                "warnings": [w.to_dict() for w in warnings],
            }
        )
    else:
        for s in servers:
            click.echo(f"{colour('ok', 'pass')}     {s.name or redact(s.target)} ({s.transport})")
        print_issues(issues)
        for w in warnings:
            place = w.where() if (w.path or w.index is not None) else "config"
            click.secho(f"warning {place}: {w.reason}", err=True, fg="yellow")
    return 1 if issues else 0


def _state(state: str) -> str:
    if state == "enabled":
        return colour("enabled", "active")
    if state == "untrusted":
        return colour("untrusted (lemon mcp trust)", "disabled")
    return colour("off (mcp disabled)" if state == "off" else state, "disabled")


def refuse_broken_files(resolved: Any) -> None:
    """End the command on a config file (or ``LEMON_MCP_SERVERS``) that cannot be read at
    all: listing the other sources would read as "no servers configured".

    Raises:
        ConfigError: naming the file and what is wrong with it.
    """
    from lemon_skills.errors import ConfigError

    for issue in resolved.issues:
        if issue.index is None and (issue.path is not None or issue.origin == "env"):
            where = issue.path if issue.path is not None else None
            reason = issue.reason if where is not None else str(issue)
            raise ConfigError(
                reason, path=where, hint="fix it (`lemon mcp validate` checks it) or move it away"
            )


def print_issues(issues: Any) -> None:
    """One stderr line per invalid config entry (``ConfigIssue`` records)."""
    print_issues_dicts([i.to_dict() for i in issues])


def print_issues_dicts(issues: list[dict[str, Any]]) -> None:
    """``print_issues`` for issues already in their JSON form (as status reports them)."""
    for issue in issues:
        where = str(issue.get("path") or issue.get("origin"))
        if issue.get("index") is not None:
            where += f" entry {issue['index']}"
        if issue.get("name"):
            where += f" ({issue['name']})"
        click.secho(f"invalid {where}: {issue['reason']}", err=True, fg="red")
