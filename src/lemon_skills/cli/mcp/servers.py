"""``lemon mcp status|logs|approve-changes|call``: connect to the servers and act on one."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from lemon_skills.cli._output import colour, emit_json, json_option, note, table, warn
from lemon_skills.cli.mcp import (
    cwd_option,
    print_issues_dicts,
    refuse_broken_files,
    server_option,
)
from lemon_skills.paths import resolve_cwd


@click.command("status")
@click.argument("server_arg", metavar="[SERVER]", required=False)
@server_option
@cwd_option
@json_option
def status_cmd(
    server_arg: str | None = None,
    server: str | None = None,
    cwd: Path | None = None,
    as_json: bool = False,
) -> int:
    """Connect to every server (or only SERVER) and show what each offers or why it failed.

    With SERVER, also prints the tail of its stderr (`lemon mcp logs SERVER` has more).
    Exit status: 1 when a server that applies failed, else 0.
    """
    if server_arg and server and server_arg != server:
        raise click.UsageError("give the server once (SERVER or --server)")
    only = _as_named(server_arg or server, cwd)
    with connect(cwd) as source:
        report = source.report("tools", server=only, progress=progress())
        data = source.status()
    if only is not None:
        data["servers"] = {k: v for k, v in data["servers"].items() if k == only}
    if as_json:
        emit_json(data)
        return 1 if report.problems else 0
    if data["disabled"]:
        note(f"MCP is off here: {data.get('disabled_reason')}")
    rows = [
        [
            name,
            s["transport"],
            colour(s["state"], "connected" if s["connected"] else "error"),
            f"{s['tool_count']}/{s['resource_count']}/{s['prompt_count']}",
            _policy_cell(s.get("policy")),
            s["last_error"] or "",
        ]
        for name, s in data["servers"].items()
    ]
    table(["SERVER", "TRANSPORT", "STATE", "TOOLS/RES/PROMPTS", "POLICY", "LAST ERROR"], rows)
    print_held(data["servers"])
    if not rows and not data["disabled"]:
        note("no MCP servers configured (see `lemon mcp --help`)")
    if only is not None:
        _print_stderr(data["servers"].get(only, {}))
    for conflict in data.get("conflicts", []):
        note(f"tool name conflict: {conflict['message']}")
    print_issues_dicts(data.get("config_errors", []))
    return 1 if report.problems else 0


@click.command("logs")
@click.argument("server")
@click.option("--follow", "-f", is_flag=True, help="Keep printing what the server writes.")
@click.option("--lines", "-n", default=200, show_default=True, help="How many lines to show.")
@cwd_option
def logs_cmd(server: str, follow: bool, lines: int, cwd: Path | None = None) -> None:
    """Print the stderr of stdio server SERVER as kept on disk (the last 2 MB of every run).

    \b
    The file is <agent dir>/mcp-logs/<server>-<id>.log; its path is printed on stderr.
    """
    from lemon_skills.mcp.config.resolve import load
    from lemon_skills.mcp.output.report import require_server
    from lemon_skills.mcp.session.errlog import follow as follow_log
    from lemon_skills.mcp.session.errlog import log_path, read_log

    resolved = load(resolve_cwd(cwd), notify=False)
    refuse_broken_files(resolved)
    path = log_path(require_server(resolved, server))
    note(f"{path}")
    if not path.exists() and not follow:
        note(f"nothing logged yet for {server!r} (only stdio servers have a stderr)")
        return
    text = read_log(path).decode("utf-8", "replace") if path.exists() else ""
    for line in text.splitlines()[-lines:] if lines > 0 else []:
        click.echo(line)
    if follow:
        for chunk in follow_log(path):
            click.echo(chunk.decode("utf-8", "replace"), nl=False)


@click.command("approve-changes")
@click.argument("server")
@cwd_option
@json_option
def approve_changes_cmd(server: str, cwd: Path | None = None, as_json: bool = False) -> None:
    """Accept SERVER's tools as it lists them now.

    A tool whose name, description or schema changed since it was first seen, or whose
    description hides instructions, is withheld from the model (`pinning: withhold`, the
    default) until approved here; `lemon mcp status` lists the tools held and why.
    """
    with connect(cwd) as source:
        source.report("tools", server=server)
        held = source.status()["servers"].get(server, {}).get("held_tools", [])
        changed = source.approve_changes(server)
    if as_json:
        emit_json({"server": server, "approved": changed})
        return
    reasons = {h["tool"]: h["reason"] for h in held}
    for name in changed:
        why = f" ({reasons[name]})" if name in reasons else ""
        click.echo(f"approved {name}{why}")
    if not changed:
        note(f"nothing to approve: every tool of {server!r} matches its pin")


@click.command("call")
@click.argument("tool")
@click.option("--args", "args_json", default="{}", help="Tool arguments as a JSON object.")
@cwd_option
@json_option
def call_cmd(tool: str, args_json: str, cwd: Path | None = None, as_json: bool = False) -> int:
    """Call TOOL (its mcp_<server>_<tool> name) and print the result; exit 1 on a tool error.

    Only the server TOOL belongs to is started. Progress the server reports is shown on a
    terminal.
    """
    params = _json_object(args_json)
    from lemon_skills.mcp.output.results import call_json

    with connect(cwd) as source:
        result = source.call_tool(tool, params, on_progress=_call_progress())
    if as_json:
        emit_json(call_json(result))
    else:
        click.echo(result.text)
        if result.is_error:
            click.secho("(the tool reported an error)", err=True, fg="red")
    return 1 if result.is_error else 0


@contextmanager
def connect(cwd: Path | None) -> Iterator[Any]:
    """The ``McpSource`` of ``cwd``; a server that needs a sign-in says where on stderr."""
    from lemon_skills.cli.mcp.trust import ask
    from lemon_skills.mcp.config.resolve import load
    from lemon_skills.mcp.session.factories import oauth_factory
    from lemon_skills.mcp.source import McpSource

    where = resolve_cwd(cwd)
    resolved = load(where, notify=False)
    refuse_broken_files(resolved)
    ask(resolved)
    auth = oauth_factory(on_authorization=_announce_sign_in)
    with McpSource(cwd=where, auth_factory=auth) as source:
        yield source


def _as_named(server: str | None, cwd: Path | None) -> str | None:
    """``server`` as lemon names it, when given as its config spells it (``my-skills``)."""
    if server is None:
        return None
    from lemon_skills.mcp.config.resolve import load, server_called

    found = server_called(load(resolve_cwd(cwd), notify=False), server)
    return found.name if found is not None and found.name else server


def _announce_sign_in(request: Any) -> None:
    note(
        f"MCP server {request.resource} needs a sign-in: open\n  {request.authorization_url}\n"
        "then approve its mcp_<server>_oauth request (`lemon approvals`) if one is pending"
    )


def progress() -> Callable[[int, int], None] | None:
    """A connection counter on a terminal's stderr; None in a pipe."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        click.echo(f"\rconnecting to MCP servers… {done}/{total}", err=True, nl=False)
        if end:
            click.echo("\r\033[K", err=True, nl=False)

    return show


def _call_progress() -> Callable[[float, float | None, str | None], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        click.echo(
            f"\r\033[Kprogress {done}" + (f": {message}" if message else ""), err=True, nl=False
        )
        if total and progress >= total:
            click.echo("\r\033[K", err=True, nl=False)

    return show


def _policy_cell(policy: dict[str, Any] | None) -> str:
    """``approve=never pin=withhold max=25000`` (what `mcp.json` set, or the defaults)."""
    if not policy:
        return ""
    cell = f"approve={policy['approve']} pin={policy['pinning']}"
    cell += f" max={policy['max_result_tokens'] or 'none'}"
    return cell + (" +per-tool" if policy.get("approve_tools") else "")


def print_held(servers: dict[str, Any]) -> None:
    """Warn about the tools pinning holds back, and how to release them."""
    for name, s in servers.items():
        withheld = (s.get("policy") or {}).get("pinning") == "withhold"
        for held in s.get("held_tools") or []:
            what = "withheld" if withheld else "changed (pinning: warn, still offered)"
            warn(
                f"{name}: tool {held['tool']!r} {what}: {held['reason']}; "
                f"`lemon mcp approve-changes {name}` accepts it"
            )


def _print_stderr(status: dict[str, Any]) -> None:
    tail = status.get("stderr_tail") or []
    if tail:
        click.echo("\nstderr (last lines):")
        for line in tail:
            click.echo(f"  {line}")


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON ({exc})", param_hint="--args") from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--args")
    return value
