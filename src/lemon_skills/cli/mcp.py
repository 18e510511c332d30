"""``lemon mcp ...``: configured MCP servers, their status, tools, resources and prompts."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from lemon_skills.cli._output import (
    colour,
    emit_json,
    json_option,
    note,
    project_option,
    semantic_option,
    table,
    warn,
)
from lemon_skills.paths import resolve_cwd

F = TypeVar("F", bound=Callable[..., Any])

_server_option = click.option("--server", "server", default=None, help="Only this server.")
cwd_option = project_option(
    "Project directory whose .lemon/mcp.json is merged over the global mcp.json "
    "(default: current dir)."
)


@click.group(invoke_without_command=True)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """MCP servers as tool sources: list, status, tools, call, resources, prompts.

    \b
    Servers come from, highest precedence first:
      lemon_skills.configure(mcp_servers=...)   (in code)
      $LEMON_MCP_SERVERS                         (JSON array or {"mcpServers": {...}})
      <cwd>/.lemon/mcp.json                      (project; {"enabled", "servers": [...]})
      $LEMON_AGENT_DIR/mcp.json                  (global, default ~/.lemon/agent)
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

    resolved = load(resolve_cwd(cwd))
    if as_json:
        emit_json(
            {
                "enabled": resolved.enabled,
                "disabled_reason": resolved.disabled_reason,
                "servers": resolved.server_dicts(),
                "overridden": [s.to_dict() for s in resolved.overridden],
                "errors": [i.to_dict() for i in resolved.issues],
            }
        )
        return
    if not resolved.enabled:
        note(f"MCP is off here: {resolved.disabled_reason}")
    rows = [
        [s.name or "", s.transport, s.origin, _state(resolved.state_of(s)), s.target]
        for s in resolved.servers
    ]
    table(["NAME", "TRANSPORT", "SOURCE", "STATE", "TARGET"], rows)
    if not rows:
        note("no MCP servers configured (see `lemon mcp --help`)")
    _print_issues(resolved.issues)


@mcp.command("status")
@click.argument("server_arg", metavar="[SERVER]", required=False)
@_server_option
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
    only = server_arg or server
    with _source(cwd) as source:
        report = source.report("tools", server=only, progress=_progress())
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
    _print_held(data["servers"])
    if not rows and not data["disabled"]:
        note("no MCP servers configured (see `lemon mcp --help`)")
    if only is not None:
        _print_stderr(data["servers"].get(only, {}))
    for conflict in data.get("conflicts", []):
        note(f"tool name conflict: {conflict['message']}")
    _print_issues_dicts(data.get("config_errors", []))
    return 1 if report.problems else 0


@mcp.command("logs")
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
    from lemon_skills.mcp.errlog import follow as follow_log
    from lemon_skills.mcp.errlog import log_path, read_log
    from lemon_skills.mcp.report import require_server

    path = log_path(require_server(load(resolve_cwd(cwd)), server))
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


_EXIT_HELP = """
    \b
    A server that failed to start, is disconnected or refused the listing gets a warning on
    stderr (stdout stays a valid listing, --json included) and the others are still listed.
    Exit status: 0 when every server that applies answered, 1 when any of them failed (or
    --server names no configured server)."""


def _listing_help(summary: str) -> Callable[[F], F]:
    def decorate(f: F) -> F:
        f.__doc__ = summary + "\n" + _EXIT_HELP
        return f

    return decorate


@mcp.command("tools")
@_server_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "anthropic", "gemini"]),
    default=None,
    help="Print the tool definitions as this provider takes them (JSON; openai = strict mode). "
    "A tool whose schema cannot be expressed is left out with a warning saying why.",
)
@cwd_option
@json_option
@click.option(
    "--for",
    "request",
    default=None,
    help="Only the tools that fit this request, best first (nothing when none fits).",
)
@click.option("--explain", is_flag=True, help="With --for: show what each score is made of.")
@click.option("--max-results", "-n", default=5, show_default=True, type=click.IntRange(1))
@semantic_option
@_listing_help("List the tools (mcp_<server>_<tool>) of the servers, or with --for rank them.")
def tools_cmd(
    server: str | None = None,
    fmt: str | None = None,
    cwd: Path | None = None,
    as_json: bool = False,
    request: str | None = None,
    explain: bool = False,
    max_results: int = 5,
    semantic: bool | None = None,
) -> int:
    from lemon_skills.cli.toolsearch import show_matches
    from lemon_skills.mcp.toolsearch import find_tools

    with _source(cwd) as source:
        report = source.report("tools", server=server, progress=_progress())
        servers = [server] if server else None
        found = (
            find_tools(
                request,
                max_results=max_results,
                servers=servers,
                source=source,
                semantic=semantic,
            )
            if request is not None
            else None
        )
        held = source.status()["servers"]
    _print_held({k: v for k, v in held.items() if server is None or k == server})
    if found is not None:
        show_matches(found, explain=explain, as_json=as_json)
    elif fmt is not None:
        _emit_provider_tools(report.rows, "openai-strict" if fmt == "openai" else fmt)
    elif as_json:
        emit_json([_tool_row(r) for r in report.rows])
    else:
        table(
            ["NAME", "SERVER", "TOOL", "DESCRIPTION"],
            [
                [r["name"], r["server"], r["tool"], _first_line(r["description"])]
                for r in report.rows
            ],
        )
    return _finish(report, "tools")


@mcp.command("approve-changes")
@click.argument("server")
@cwd_option
@json_option
def approve_changes_cmd(server: str, cwd: Path | None = None, as_json: bool = False) -> None:
    """Accept SERVER's tools as it lists them now.

    A tool whose name, description or schema changed since it was first seen, or whose
    description hides instructions, is withheld from the model (`pinning: withhold`, the
    default) until approved here; `lemon mcp status` lists the tools held and why.
    """
    with _source(cwd) as source:
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


@mcp.command("call")
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
    from lemon_skills.mcp.results import call_json

    with _source(cwd) as source:
        result = source.call_tool(tool, params, on_progress=_call_progress())
    if as_json:
        emit_json(call_json(result))
    else:
        click.echo(result.text)
        if result.is_error:
            click.secho("(the tool reported an error)", err=True, fg="red")
    return 1 if result.is_error else 0


@mcp.command("resources")
@_server_option
@cwd_option
@json_option
@_listing_help("List the resources the servers offer (after filters).")
def resources_cmd(server: str | None = None, cwd: Path | None = None, as_json: bool = False) -> int:
    with _source(cwd) as source:
        report = source.report("resources", server=server, progress=_progress())
    if as_json:
        emit_json(list(report.rows))
        return _finish(report, "resources")
    table(
        ["SERVER", "URI", "NAME", "DESCRIPTION"],
        [
            [
                r["server"],
                r.get("uri") or r.get("uriTemplate", ""),
                r.get("name", ""),
                _first_line(r.get("description", "")),
            ]
            for r in report.rows
        ],
    )
    return _finish(report, "resources")


@mcp.command("prompts")
@_server_option
@cwd_option
@json_option
@_listing_help("List the prompts the servers offer (after filters).")
def prompts_cmd(server: str | None = None, cwd: Path | None = None, as_json: bool = False) -> int:
    with _source(cwd) as source:
        report = source.report("prompts", server=server, progress=_progress())
    if as_json:
        emit_json(list(report.rows))
        return _finish(report, "prompts")
    table(
        ["SERVER", "NAME", "ARGUMENTS", "DESCRIPTION"],
        [
            [
                r["server"],
                r["name"],
                ", ".join(a["name"] for a in r.get("arguments", [])),
                _first_line(r.get("description", "")),
            ]
            for r in report.rows
        ],
    )
    return _finish(report, "prompts")


@mcp.command("validate")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@cwd_option
@json_option
def validate_cmd(file: Path | None = None, cwd: Path | None = None, as_json: bool = False) -> int:
    """Check FILE (an mcp.json), or every config source of --cwd; exit 1 on any error.

    Warnings (unknown keys, an executable that cannot be found, a command with its arguments
    in it, no servers at all) are printed too but do not change the exit status.
    """
    from lemon_skills.mcp.config.entries import ConfigIssue
    from lemon_skills.mcp.config.lint import lint_file, lint_sources
    from lemon_skills.mcp.config.resolve import load, read_document

    if file is not None:
        if not file.exists():
            raise click.BadParameter(f"{file} does not exist", param_hint="FILE")
        base = file.parent.absolute()
        _enabled, servers, issues = read_document(file, "file", base)
        warnings = lint_file(file, "file", base)
    else:
        where = resolve_cwd(cwd)
        resolved = load(where)
        servers, issues = list(resolved.servers), list(resolved.issues)
        warnings = lint_sources(where)
        if not servers and not issues and not warnings:
            warnings = [
                ConfigIssue(reason="no MCP servers are configured (see `lemon mcp --help`)")
            ]
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
            click.echo(f"{colour('ok', 'pass')}     {s.name or s.target} ({s.transport})")
        _print_issues(issues)
        for w in warnings:
            place = w.where() if (w.path or w.index is not None) else "config"
            click.secho(f"warning {place}: {w.reason}", err=True, fg="yellow")
    return 1 if issues else 0


@mcp.command("smoke")
@click.argument("kind", type=click.Choice(["stdio", "http", "sse"]))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Proof JSON path (default .lemon/proofs/mcp-<kind>-latest.json).",
)
@project_option("Project directory whose .lemon/proofs/ receives the proof (default: current dir).")
@click.option("--json", "as_json", is_flag=True, help="Print the proof JSON instead of a summary.")
def smoke_cmd(
    kind: str, out: Path | None = None, cwd: Path | None = None, as_json: bool = False
) -> int:
    """Run the MCP smoke proof for KIND against the bundled fixture servers.

    \b
    stdio: 17 checks (sampling policies and the ops_approval bridge included)
    http:  24 checks (OAuth discovery, client credentials, refresh, PKCE, token cache,
           loopback sign-in behind an approval) against a fixture authorization server
    sse:   14 checks
    Everything runs on 127.0.0.1 with a throw-away agent dir; exit 1 when a check fails.
    A terminal gets a summary; --json, or a pipe, gets the proof JSON.
    """
    from lemon_skills.selftest import run_smoke, write_proof

    proof = run_smoke(kind)
    paths = write_proof(proof, out=out, cwd=resolve_cwd(cwd))
    # Scripts written before --json read the proof from a pipe; they keep getting it.
    if as_json or not sys.stdout.isatty():
        emit_json(proof)
    else:
        _smoke_summary(proof)
    note("proof written to " + ", ".join(str(p) for p in paths))
    return 1 if proof["status"] == "failed" else 0


def _smoke_summary(proof: dict[str, Any]) -> None:
    click.echo(
        f"{proof['proof']}: {colour(proof['status'], _PROOF_STATE.get(proof['status']))} "
        f"({proof['completed_count']} passed, {proof['failed_count']} failed, "
        f"{proof['skipped_count']} skipped)"
    )
    for c in proof["checks"]:
        if c["status"] != "completed":
            hint = f": {c['failure_hint']}" if c.get("failure_hint") else ""
            click.echo(f"  {colour(c['status'], _PROOF_STATE.get(c['status']))} {c['name']}{hint}")


_PROOF_STATE = {"completed": "pass", "failed": "error", "skipped": "warn", "unknown": "warn"}


@contextmanager
def _source(cwd: Path | None) -> Iterator[Any]:
    from lemon_skills.mcp.factories import oauth_factory
    from lemon_skills.mcp.source import McpSource

    auth = oauth_factory(on_authorization=_announce_sign_in)
    with McpSource(cwd=resolve_cwd(cwd), auth_factory=auth) as source:
        yield source


def _finish(report: Any, what: str) -> int:
    """Warn about every server that could not contribute; the listing's exit status."""
    if report.off_reason:
        note(report.off_reason)
    for p in report.problems:
        warn(
            f"MCP server {p.server!r} {p.state}: {p.error}; its {what} are not listed "
            "(run `lemon mcp status` for details)"
        )
    if not report.rows and not report.problems and not report.off_reason:
        hint = " (run `lemon mcp status` to see why)" if what == "tools" else ""
        note(f"no MCP {what}{hint}")
    return 1 if report.problems else 0


def _announce_sign_in(request: Any) -> None:
    note(
        f"MCP server {request.resource} needs a sign-in: open\n  {request.authorization_url}\n"
        "then approve its mcp_<server>_oauth request (`lemon approvals`) if one is pending"
    )


def _progress() -> Callable[[int, int], None] | None:
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


def _print_held(servers: dict[str, Any]) -> None:
    """Tools pinning holds back, and how to release them."""
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


def _emit_provider_tools(rows: Any, fmt: Any) -> None:
    from lemon_skills.tool import Tool, ToolResult, export_tools

    def unused(params: dict[str, Any], ctx: Any) -> ToolResult:
        raise NotImplementedError

    tools = [
        Tool(
            name=r["name"],
            description=r["description"],
            parameters=r["input_schema"],
            handler=unused,
        )
        for r in rows
    ]
    defs, excluded = export_tools(tools, fmt)
    emit_json(defs)
    for e in excluded:
        warn(f"{e.name} left out: {e.reason}")


def _tool_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("name", "server", "tool", "description", "input_schema")}


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON ({exc})", param_hint="--args") from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--args")
    return value


def _state(state: str) -> str:
    if state == "enabled":
        return colour("enabled", "active")
    return colour("off (mcp disabled)" if state == "off" else state, "disabled")


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _print_issues(issues: Any) -> None:
    _print_issues_dicts([i.to_dict() for i in issues])


def _print_issues_dicts(issues: list[dict[str, Any]]) -> None:
    for issue in issues:
        where = str(issue.get("path") or issue.get("origin"))
        if issue.get("index") is not None:
            where += f" entry {issue['index']}"
        if issue.get("name"):
            where += f" ({issue['name']})"
        click.secho(f"invalid {where}: {issue['reason']}", err=True, fg="red")


@mcp.command("serve")
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
)
@project_option("Project whose skills are served, with the global ones (default: current dir).")
@click.option(
    "--skills-only/--tools",
    "skills_only",
    default=False,
    help="Offer only the skills extension and prompts, or also the find_skills and "
    "read_skill tools (default).",
)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Also offer skill_manage (every write still goes through approvals).",
)
@click.option(
    "--agent",
    default=None,
    metavar="NAME",
    help="Serve only what this agent's skill profile (skills.json profiles) lets it see.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Print what would be served, what is served under another name and what cannot be "
    "served and why, then exit (1 when a skill cannot be served).",
)
def serve_cmd(
    http: str | None,
    skills_only: bool,
    allow_write: bool,
    check: bool = False,
    cwd: Path | None = None,
    agent: str | None = None,
) -> int | None:
    """Serve this project's skills to any MCP host (SEP-2640 skills, prompts and tools).

    Read-only unless --allow-write. Serves what `lemon prompt` would offer, and tells
    clients when a skill is added, edited or removed.
    """
    import anyio

    from lemon_skills.tools.serve.server import Options, serve_http, serve_stdio

    options = Options(
        cwd=resolve_cwd(cwd), tools=not skills_only, allow_write=allow_write, agent=agent
    )
    if check:
        return _serve_check(options)
    if http is None:
        anyio.run(serve_stdio, options)
        return None
    host, _, port = http.rpartition(":")
    if not host or not port.isdigit():
        raise click.BadParameter("expected HOST:PORT, e.g. 127.0.0.1:8765", param_hint="--http")
    anyio.run(serve_http, options, host, int(port))
    return None


def _serve_check(options: Any) -> int:
    from lemon_skills.skills.remote.model import ORIGINAL_NAME_KEY
    from lemon_skills.tools.serve.server import checked

    catalog = checked(options)
    click.echo(f"{len(catalog.skills)} skills served")
    renamed = catalog.renamed()
    if renamed:
        click.echo(
            f"{len(renamed)} served under their folder name (their own name breaks the Agent "
            f"Skills naming rules; it is kept in metadata {ORIGINAL_NAME_KEY!r}):"
        )
        for key, own, served in renamed:
            click.echo(f"  {key}: {own!r} as {served!r}")
    if catalog.skipped:
        click.echo(f"{len(catalog.skipped)} not served:")
        for why in catalog.skipped:
            click.echo(f"  {why}")
    return 1 if catalog.skipped else 0


def _register_eval() -> None:
    from lemon_skills.cli.toolsearch import eval_cmd

    mcp.add_command(eval_cmd)


_register_eval()
