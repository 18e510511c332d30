"""``lemon skill install|update|uninstall|verify``: installed skills and their lock.

The library does the work; this module adds the terminal parts: the y/N approval prompt, the
progress line during a clone, and rendering. Library modules are imported inside the commands
so ``lemon skill list`` does not pay for the installer at start-up.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from lemon_skills.cli._output import (
    colour,
    cwd_option,
    emit_json,
    json_option,
    note,
    scope_options,
    warn,
)
from lemon_skills.paths import Scope

if TYPE_CHECKING:
    from lemon_skills.skills.audit.model import AuditReport
    from lemon_skills.skills.install.lifecycle import UpdateResult
    from lemon_skills.skills.install.review import ApprovalRequest, Approver

F = TypeVar("F", bound=Callable[..., Any])


def interactive() -> bool:
    """True when a person can answer a prompt (stdin and stderr are terminals)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def prompt_approver(request: ApprovalRequest, progress: ProgressLine | None = None) -> bool:
    """Show the request on stderr and ask y/N (default no)."""
    if progress is not None:
        progress.done()
    click.echo(request.describe(), err=True)
    verb = request.operation.capitalize()
    return click.confirm(f"{verb} {request.key!r}?", default=False, err=True)


class ProgressLine:
    """One self-overwriting status line on stderr (only on a terminal)."""

    def __init__(self) -> None:
        self.used = False

    def __call__(self, line: str) -> None:
        width = shutil.get_terminal_size((80, 24)).columns - 1
        click.echo("\r" + line.strip()[:width].ljust(width), err=True, nl=False)
        self.used = True

    def done(self) -> None:
        """Erase the line (before a prompt or the final output)."""
        if self.used:
            width = shutil.get_terminal_size((80, 24)).columns - 1
            click.echo("\r" + " " * width + "\r", err=True, nl=False)
            self.used = False


@contextlib.contextmanager
def terminal(
    wait_approval: float | None = None,
) -> Iterator[tuple[ProgressLine | None, Approver | None]]:
    """The progress line (stderr is a terminal) and the approver.

    ``wait_approval`` queues the request in the approvals store and waits that many seconds
    for an operator; otherwise a person at a terminal is asked y/N.
    """
    progress = ProgressLine() if sys.stderr.isatty() else None
    approver: Approver | None = None
    if wait_approval is not None:
        from lemon_skills.skills.install.review import queued_approver

        approver = queued_approver(timeout=wait_approval, on_pending=_announce_pending)
    elif interactive():
        approver = functools.partial(prompt_approver, progress=progress)
    try:
        yield progress, approver
    finally:
        if progress is not None:
            progress.done()


def _announce_pending(approval: Any) -> None:
    note(
        f"waiting for approval {approval.id}: run `lemon approvals show {approval.id}`, then "
        f"`lemon approvals approve {approval.id}` or `deny {approval.id}`"
    )


def approval_options(f: F) -> F:
    """``--yes``, ``--allow-warnings`` and ``--wait-approval``."""
    f = click.option(
        "--wait-approval",
        type=click.FloatRange(min=1),
        default=None,
        metavar="SECONDS",
        help="Queue the approval for `lemon approvals approve ID` (another terminal or a host) "
        "and wait up to SECONDS for it.",
    )(f)
    f = click.option(
        "--allow-warnings",
        is_flag=True,
        help="With --yes, also accept audit warnings without a prompt (recorded in the lock).",
    )(f)
    return click.option(
        "--yes",
        "-y",
        is_flag=True,
        help="Pre-approve bundles the audit passes; warnings still need review.",
    )(f)


@click.command("install")
@click.argument("source")
@cwd_option
@scope_options("global")
@approval_options
@click.option("--force", is_flag=True, help="Replace a skill that is already installed.")
@click.option("--ref", help="Git branch, tag or commit to install.")
@click.option("--path", "subdir", help="Subdirectory of the source that holds the skill(s).")
@click.option("--skill", "skills", multiple=True, help="Skill to take from a multi-skill source.")
@click.option("--all", "all_", is_flag=True, help="Install every skill the source holds.")
@click.option("--name", help="Install under this key instead of the skill's own name.")
@click.option(
    "--require-signature",
    is_flag=True,
    help="Refuse a skill without a verified signature (skill.sigstore.json).",
)
@click.option("--identity", help="Signer identity you trust (certificate email or URI).")
@click.option("--issuer", help="OIDC issuer you trust for that identity.")
@click.option(
    "--trust-root",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="CA certificates (PEM) a certificate-signed skill must chain to, or a Sigstore "
    "trust config (JSON) for offline keyless verification.",
)
@click.option(
    "--key",
    "signing_key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Public key (PEM) a key-signed skill must verify with.",
)
@json_option
def install_cmd(source: str, cwd: Path | None, scope: Scope, subdir: str | None, **kw: Any) -> None:
    """Install skills from a directory, a git URL or gh:OWNER/REPO.

    \b
    Examples:
      lemon skill install ./my-skill
      lemon skill install gh:acme/skills --skill pdf-tools
      lemon skill install https://git.example.com/skills.git#skills/pdf --ref v1.2

    Every install is audited; blocked bundles are never installed. On a terminal you are
    shown the files, scripts and findings and asked to confirm; elsewhere pass --yes.
    """
    from lemon_skills.skills.install.service import install_many

    with terminal(kw.get("wait_approval")) as (progress, approver):
        results = install_many(
            source,
            cwd=cwd,
            scope=scope,
            approve=kw["yes"],
            approver=approver,
            allow_warnings=kw["allow_warnings"],
            force=kw["force"],
            ref=kw["ref"],
            path=subdir,
            skills=kw["skills"],
            all_=kw["all_"],
            name=kw["name"],
            progress=progress,
            require_signature=kw["require_signature"],
            identity=kw["identity"],
            issuer=kw["issuer"],
            trust_root=kw["trust_root"],
            signing_key=kw["signing_key"],
        )
    if kw["as_json"]:
        emit_json([r.to_dict() for r in results])
        return
    for r in results:
        at = f" @ {r.record['commit'][:12]}" if r.record.get("commit") else ""
        click.echo(f"installed {r.key} ({r.scope}) at {r.path}{at}")
        _render_audit(r.report)
        _warn_if_shadowed(r.key, r.path, cwd)


def _warn_if_shadowed(key: str, path: Path, cwd: Path | None) -> None:
    from lemon_skills.skills.api import get

    visible = get(key, cwd=cwd)
    if visible is not None and visible.path != path:
        warn(f"{key} is shadowed here by the {visible.source} skill at {visible.path}")


def _render_audit(report: AuditReport) -> None:
    click.echo(f"  audit: {colour(report.verdict)}")
    for f in report.findings:
        click.echo(f"    {f.summary()}")


@click.command("update")
@click.argument("key", required=False)
@click.option("--all", "all_", is_flag=True, help="Update every installed skill.")
@cwd_option
@scope_options(None)
@approval_options
@click.option("--force", is_flag=True, help="Reinstall even if unchanged; discard local edits.")
@json_option
def update_cmd(key: str | None, all_: bool, cwd: Path | None, **kw: Any) -> None:
    """Update installed skills from the source recorded in the lock.

    Fetches only when the upstream commit (git) or the directory's hash (local source)
    differs from the lock; asks again when the audit finds something new.
    """
    from lemon_skills.skills.install.lifecycle import update, update_all

    if (key is None) == (not all_):
        raise click.UsageError("name a skill to update, or pass --all")
    with terminal(kw.get("wait_approval")) as (progress, approver):
        opts: dict[str, Any] = {
            "cwd": cwd,
            "scope": kw["scope"],
            "approve": kw["yes"],
            "approver": approver,
            "allow_warnings": kw["allow_warnings"],
            "force": kw["force"],
            "progress": progress,
        }
        results = update_all(**opts) if key is None else [update(key, **opts)]
    if kw["as_json"]:
        emit_json([r.to_dict() for r in results])
    else:
        for r in results:
            _render_update(r)
        if not results:
            note("no installed skills to update; install one with `lemon skill install SOURCE`")
    if any(r.error for r in results):
        raise click.exceptions.Exit(1)


def _render_update(r: UpdateResult) -> None:
    if r.error:
        click.echo(f"{r.key}: {colour('error')} {r.error}")
        return
    moved = f" {(r.previous_commit or '')[:12]} -> {(r.commit or '')[:12]}" if r.commit else ""
    state = colour("updated", "active") if r.changed else "unchanged"
    click.echo(f"{r.key} ({r.scope}): {state} ({r.reason}){moved if r.changed else ''}")
    if r.report is not None and r.report.findings:
        _render_audit(r.report)


@click.command("uninstall")
@click.argument("key")
@cwd_option
@scope_options(None)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation on a terminal.")
@json_option
def uninstall_cmd(
    key: str, cwd: Path | None, scope: Scope | None, yes: bool, as_json: bool = False
) -> None:
    """Remove a skill, its lock record and its enable/disable entries.

    On a terminal you are asked first (skip with --yes). Skills in directories other tools
    manage (~/.agents/skills) are left alone.
    """
    from lemon_skills.skills.install.lifecycle import uninstall

    ask = prompt_approver if interactive() and not yes else None
    path = uninstall(key, cwd=cwd, scope=scope, approver=ask)
    if as_json:
        emit_json({"key": key, "uninstalled": True, "path": str(path)})
        return
    click.echo(f"uninstalled {key} ({path})")


@click.command("verify")
@cwd_option
@scope_options(None)
@json_option
def verify_cmd(cwd: Path | None, scope: Scope | None, as_json: bool) -> None:
    """Re-hash installed skills and report any that differ from the lock. Exits 1 on drift."""
    from lemon_skills.skills.install.lifecycle import verify

    results = verify(cwd=cwd, scope=scope)
    if as_json:
        emit_json([r.to_dict() for r in results])
    else:
        for r in results:
            click.echo(f"{r.key} ({r.scope}): {colour(r.status, _STATUS.get(r.status))}")
            if r.signature:
                by = r.signature.get("issuer")
                click.echo(
                    f"  signed by {r.signature.get('identity')}"
                    + (f" (issuer {by})" if by else "")
                    + f", {r.signature.get('kind')} signature verified at install"
                )
            for label in ("changed", "added", "removed"):
                for rel in getattr(r, label):
                    click.echo(f"  {label}: {rel}")
        if not results:
            note("no installed skills in the lock")
    if any(r.status != "ok" for r in results):
        if not as_json:
            warn("run `lemon skill update KEY --force` to restore a skill from its source")
        raise click.exceptions.Exit(1)


_STATUS = {"ok": "pass", "modified": "warn", "missing": "error"}

COMMANDS = (install_cmd, update_cmd, uninstall_cmd, verify_cmd)
