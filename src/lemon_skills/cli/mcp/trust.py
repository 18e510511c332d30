"""``lemon mcp trust``: let a project's ``.lemon/mcp.json`` start its servers (or stop it)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lemon_skills.cli._output import emit_json, json_option, note, table
from lemon_skills.cli.mcp import cwd_option
from lemon_skills.errors import ConfigError
from lemon_skills.paths import resolve_cwd

if TYPE_CHECKING:
    from lemon_skills.mcp.config.resolve import ResolvedConfig


@click.command("trust")
@cwd_option
@click.option("--yes", "-y", is_flag=True, help="Trust without asking (for scripts).")
@click.option("--revoke", is_flag=True, help="Forget the trust in this project's file.")
@click.option("--list", "list_", is_flag=True, help="List every trusted project file.")
@json_option
def trust_cmd(
    cwd: Path | None = None,
    yes: bool = False,
    revoke: bool = False,
    list_: bool = False,
    as_json: bool = False,
) -> None:
    """Trust the servers of --cwd's .lemon/mcp.json (its current content) to start.

    A project's mcp.json comes with the repository, and a stdio server in it is a command
    line: lemon starts none of them until you trust that file here. Trust covers the file's
    exact bytes; after any edit it must be given again. The global mcp.json, LEMON_MCP_SERVERS
    and servers configured in code are always trusted; LEMON_TRUST_PROJECT_MCP=1 trusts every
    project. Trust is kept in $LEMON_AGENT_DIR/mcp-trust.json.

    \b
      lemon mcp trust            show the servers, ask, then trust
      lemon mcp trust --yes      trust without asking
      lemon mcp trust --revoke   stop trusting this project's file
      lemon mcp trust --list     every trusted file and whether it changed since
    """
    from lemon_skills.mcp.config import trust as trust_mod
    from lemon_skills.mcp.config.locations import project_config_path

    if sum((revoke, list_)) > 1:
        raise click.UsageError("give at most one of --revoke and --list")
    if list_:
        _list(as_json)
        return
    path = project_config_path(resolve_cwd(cwd))
    if revoke:
        removed = trust_mod.revoke(path)
        if as_json:
            emit_json({"path": str(path), "revoked": removed})
        else:
            note(f"revoked trust in {path}" if removed else f"{path} was not trusted")
        return
    data = _read(path)
    if not yes:
        _show(path, data)
        if not (sys.stdin.isatty() and click.confirm("start these servers?", default=False)):
            where = shlex.quote(str(path.parent.parent))
            raise ConfigError(
                "not trusted",
                path=path,
                hint=f"review the file, then run `lemon mcp trust --yes --cwd {where}`",
            )
    verdict = trust_mod.trust(path, data)
    if as_json:
        emit_json(verdict.to_dict())
    else:
        note(f"trusted {path} (sha256 {verdict.sha256[:12]}); edit it and trust it again")


def ask(resolved: ResolvedConfig) -> None:
    """On a terminal, offer to trust the untrusted project servers of ``resolved`` (y/N)
    before an explicit ``lemon mcp`` command connects; elsewhere the resolver says what it
    skips."""
    from lemon_skills.mcp.config import trust as trust_mod

    line = resolved.untrusted_notice()
    if line is None or resolved.trust is None:
        return
    path = resolved.trust.path
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return
    data = _read(path)
    _show(path, data)
    if click.confirm("trust this file and start its servers?", default=False, err=True):
        trust_mod.trust(path, data)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            "no project MCP config here", path=path, hint="pass the project with --cwd"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from exc


def _show(path: Path, data: bytes) -> None:
    """The servers this exact content would start, as the user is asked to trust them."""
    from lemon_skills.mcp.config.resolve import parse_document
    from lemon_skills.mcp.session.logs import redact

    _enabled, servers, issues = parse_document(data, path, "project", path.parent.parent)
    note(f"{path} configures:")
    rows = [[s.name or "", s.transport, redact(s.target)] for s in servers]
    table(["NAME", "TRANSPORT", "RUNS / CONNECTS TO"], rows, wrap_last=False)
    for issue in issues:
        note(f"  (invalid, ignored) {issue}")


def _list(as_json: bool) -> None:
    from lemon_skills.mcp.config import trust as trust_mod

    rows: list[dict[str, Any]] = []
    for key, record in sorted(trust_mod.trusted_files().items()):
        path = Path(key)
        try:
            state = (
                "current"
                if trust_mod.digest(path.read_bytes()) == record.get("sha256")
                else "changed"
            )
        except OSError:
            state = "missing"
        rows.append({"path": key, "state": state, "trusted_at": record.get("trusted_at")})
    if as_json:
        emit_json({"trusted": rows})
        return
    table(
        ["PATH", "STATE", "TRUSTED AT"],
        [[r["path"], r["state"], str(r["trusted_at"])] for r in rows],
    )
    if not rows:
        note("no project MCP config is trusted (LEMON_TRUST_PROJECT_MCP=1 trusts all)")
