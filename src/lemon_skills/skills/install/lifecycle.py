"""After install: ``update`` from the recorded source, ``uninstall``, and ``verify`` against
the lock.

``update`` asks the source for its upstream version first (``git ls-remote`` for git, the
bundle hash of the directory for a local source) and fetches only when that differs from the
lock, so an unchanged upstream changes nothing on disk. Local edits to an installed skill are
never overwritten without ``force``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from lemon_skills import _fs
from lemon_skills._proc import ProgressFn
from lemon_skills.errors import (
    ConfigError,
    InstallError,
    IntegrityError,
    LemonSkillsError,
    SourceError,
    TrustPolicyViolation,
)
from lemon_skills.paths import (
    PathArg,
    Scope,
    explicit_scope,
    project_skill_dirs,
    resolve_cwd,
    scope_skill_dir,
)
from lemon_skills.skills.audit.model import AuditReport
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.catalog.registry import require
from lemon_skills.skills.format.bundle import Drift, bundle_hash, collect, drift, file_hashes
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.install import apply as installer
from lemon_skills.skills.install import lockfile, signature
from lemon_skills.skills.install.apply import Policy
from lemon_skills.skills.install.plan import (
    InstallPlan,
    needs_reapproval,
    new_findings,
    spec_from_record,
)
from lemon_skills.skills.install.review import ApprovalRequest, Approver, decide
from lemon_skills.skills.install.service import load_entry
from lemon_skills.skills.install.sources import source_for

_SCOPES: tuple[Scope, Scope] = ("project", "global")


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateResult:
    """What ``update`` did to one skill."""

    key: str
    scope: Scope
    path: Path
    changed: bool
    reason: str
    previous_commit: str | None = None
    commit: str | None = None
    report: AuditReport | None = None
    entry: Entry | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "key": self.key,
            "scope": self.scope,
            "path": str(self.path),
            "changed": self.changed,
            "reason": self.reason,
            "previous_commit": self.previous_commit,
            "commit": self.commit,
            "verdict": self.report.verdict if self.report else None,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyResult:
    """Whether one installed skill still matches its lock record."""

    key: str
    scope: Scope
    path: Path
    status: Literal["ok", "modified", "missing"]
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: The signature verified at install (kind, identity, issuer, digest), if it had one.
    signature: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "key": self.key,
            "scope": self.scope,
            "path": str(self.path),
            "status": self.status,
            "changed": list(self.changed),
            "added": list(self.added),
            "removed": list(self.removed),
            "signature": None if self.signature is None else dict(self.signature),
        }


def update(
    key: str,
    *,
    cwd: PathArg = None,
    global_: bool | None = None,
    scope: Scope | None = None,
    approve: bool = False,
    approver: Approver | None = None,
    allow_warnings: bool = False,
    force: bool = False,
    progress: ProgressFn | None = None,
    now: datetime | None = None,
) -> UpdateResult:
    """Update one installed skill from the source recorded in its lock.

    Without ``scope`` the project lock is tried first, then the global one. Approval is asked
    again only when the audit finds something new or the update adds scripts.

    Raises:
        InstallError: the skill has no lock record; IntegrityError when it was edited locally
            (pass ``force=True`` to discard the edits).
        SourceError: the source cannot be reached or no longer holds the skill.
        TrustPolicyViolation: the new version is blocked or its approval was denied.
    """
    where = resolve_cwd(cwd)
    sc = _scope_with_record(key, where, explicit_scope(global_, scope))
    policy = Policy(approve=approve, approver=approver, allow_warnings=allow_warnings)
    return _update(key, sc, where, policy, force, progress, now or datetime.now(UTC))


def update_all(
    *,
    cwd: PathArg = None,
    global_: bool | None = None,
    scope: Scope | None = None,
    approve: bool = False,
    approver: Approver | None = None,
    allow_warnings: bool = False,
    force: bool = False,
    progress: ProgressFn | None = None,
) -> list[UpdateResult]:
    """Update every skill in the lock of one scope (default: project, then global).

    One skill failing does not stop the others; its result carries ``error``.
    """
    where = resolve_cwd(cwd)
    chosen = explicit_scope(global_, scope)
    policy = Policy(approve=approve, approver=approver, allow_warnings=allow_warnings)
    out = []
    for sc in (chosen,) if chosen else _SCOPES:
        for key in sorted(lockfile.records(lockfile.lock_path(sc, where))):
            try:
                out.append(_update(key, sc, where, policy, force, progress, datetime.now(UTC)))
            except LemonSkillsError as exc:
                path = scope_skill_dir(sc, where) / key
                out.append(
                    UpdateResult(
                        key=key, scope=sc, path=path, changed=False, reason="failed", error=str(exc)
                    )
                )
    return out


def _scope_with_record(key: str, where: Path, scope: Scope | None) -> Scope:
    for sc in (scope,) if scope else _SCOPES:
        if key in lockfile.records(lockfile.lock_path(sc, where)):
            return sc
    raise InstallError(
        f"skill {key!r} was not installed by lemon (no lock record)",
        hint=f"reinstall it with `lemon skill install SOURCE --force` to track {key!r}",
    )


def _update(
    key: str,
    sc: Scope,
    where: Path,
    policy: Policy,
    force: bool,
    progress: ProgressFn | None,
    now: datetime,
) -> UpdateResult:
    lock = lockfile.lock_path(sc, where)
    rec = lockfile.records(lock)[key]
    dest = scope_skill_dir(sc, where) / key
    spec = spec_from_record(rec)
    source = source_for(spec)
    old = rec.get("commit")
    present = os.path.isdir(dest)
    if present and not force:
        _refuse_local_edits(key, rec, dest)
        latest = source.latest(spec)
        if latest is None or latest == rec.get(source.version_field):
            why = "pinned to a commit" if latest is None else "up to date"
            return UpdateResult(
                key=key, scope=sc, path=dest, changed=False, reason=why, previous_commit=old
            )
    with installer.staging(dest.parent) as stage:
        fetched = installer.fetch(spec, stage, progress)
        found = installer.find_skills(fetched.root)
        if not found or found[0].rel:
            raise SourceError(f"{spec.raw} no longer has a skill at {spec.subdir or 'its root'}")
        plan = InstallPlan(
            key=key, scope=sc, destination=dest, found=found[0], spec=spec, replaces=present
        )
        staged = installer.stage_skill(plan, fetched.root)
        trust = signature.trust_for(where, signature.from_record(rec.get("signature")))
        staged = replace(staged, signature=signature.record(staged.path, trust, key=key))
        if present and not force and staged.report.bundle_hash == rec.get("bundle_hash"):
            # The repository moved on but this skill did not: remember the commit, touch nothing.
            lockfile.put(lock, key, {**rec, "commit": fetched.commit})
            return UpdateResult(
                key=key,
                scope=sc,
                path=dest,
                changed=False,
                reason="skill unchanged upstream",
                previous_commit=old,
                commit=fetched.commit,
            )
        new = new_findings(rec, staged.report)
        request = installer.request_for(staged, operation="update", commit=fetched.commit, new=new)
        how = decide(
            request,
            approve=policy.approve,
            approver=policy.approver,
            allow_warnings=policy.allow_warnings,
            required=needs_reapproval(rec, staged.report) or not present,
        )
        installer.activate_all([staged], [how], lock=lock, commit=fetched.commit, now=now)
    installer.invalidate_registry()
    return UpdateResult(
        key=key,
        scope=sc,
        path=dest,
        changed=True,
        reason="reinstalled" if force else "updated",
        previous_commit=old,
        commit=fetched.commit,
        report=staged.report,
        entry=load_entry(dest, sc, where),
    )


def local_drift(rec: dict[str, Any], dest: Path) -> Drift:
    """How ``dest`` differs from its lock record (by bundle hash when files are not recorded)."""
    bundle = collect(dest)
    files = rec.get("files")
    if isinstance(files, dict):
        return drift(files, bundle)
    current = bundle_hash(file_hashes(bundle.files))
    return Drift() if current == rec.get("bundle_hash") else Drift(changed=("(bundle)",))


def _refuse_local_edits(key: str, rec: dict[str, Any], dest: Path) -> None:
    d = local_drift(rec, dest)
    if d:
        raise IntegrityError(
            f"skill {key!r} was changed locally since it was installed: {d.describe()}",
            hint="see `lemon skill verify`; pass --force to replace the local changes",
        )


def uninstall(
    key: str,
    *,
    cwd: PathArg = None,
    global_: bool | None = None,
    scope: Scope | None = None,
    approver: Approver | None = None,
) -> Path:
    """Remove a skill's directory, its lock record and its skills.json entries; return the path.

    Only skills in a lemon skill directory (``<agent dir>/skill`` or ``<cwd>/.lemon/skill``)
    are removed; ``approver``, when given, is asked first.

    Raises:
        SkillNotFound: no such skill.
        InstallError: the skill lives in a directory another tool manages.
        TrustPolicyViolation: the approver said no.
    """
    where = resolve_cwd(cwd)
    sc, dest = _managed_location(key, where, explicit_scope(global_, scope))
    lock = lockfile.lock_path(sc, where)
    if approver is not None:
        rec = lockfile.records(lock).get(key) or {}
        request = ApprovalRequest(
            operation="uninstall",
            key=key,
            source=str(rec.get("source") or dest),
            destination=dest,
            scope=sc,
            verdict="pass",
            replaces=True,
        )
        if not approver(request):
            raise TrustPolicyViolation(f"skill uninstall of {key!r} denied")
    also = []
    if sc == "global" and not any(os.path.lexists(d / key) for d in project_skill_dirs(where)):
        # A project entry for this key can only have been about the skill going away.
        also.append(enablement.skills_json_path("project", where))
    _remove(key, dest, lock, enablement.skills_json_path(sc, where), also)
    installer.invalidate_registry()
    return dest


def _managed_location(key: str, where: Path, scope: Scope | None) -> tuple[Scope, Path]:
    for sc in (scope,) if scope else _SCOPES:
        dest = scope_skill_dir(sc, where) / key
        if os.path.lexists(dest) or key in lockfile.records(lockfile.lock_path(sc, where)):
            return sc, dest
    entry = require(key, cwd=where)  # raises SkillNotFound with suggestions
    raise InstallError(
        f"skill {key!r} at {entry.path} is not in a lemon skill directory",
        hint="remove it with the tool that installed it, or delete the directory yourself",
    )


def _remove(key: str, dest: Path, lock: Path, skills_json: Path, also: Sequence[Path] = ()) -> None:
    backup = dest.parent / f".backup-{key}-{secrets.token_hex(6)}"
    moved = os.path.lexists(dest)
    if moved:
        os.rename(dest, backup)
    try:
        previous = lockfile.put(lock, key, None)
        try:
            enablement.forget(skills_json, key)
        except ConfigError:
            lockfile.put(lock, key, previous)
            raise
    except BaseException:
        if moved:
            os.rename(backup, dest)
        raise
    if moved:
        _fs.remove_tree(backup)
    for path in also:
        # Stale entries elsewhere; a corrupt file there is reported by status, not here.
        with contextlib.suppress(ConfigError):
            enablement.forget(path, key)


def verify(
    *, cwd: PathArg = None, global_: bool | None = None, scope: Scope | None = None
) -> list[VerifyResult]:
    """Re-hash every installed skill and compare it with its lock record.

    Raises:
        ConfigError: a lockfile is corrupt.
    """
    where = resolve_cwd(cwd)
    chosen = explicit_scope(global_, scope)
    out = []
    for sc in (chosen,) if chosen else _SCOPES:
        for key, rec in sorted(lockfile.records(lockfile.lock_path(sc, where)).items()):
            dest = scope_skill_dir(sc, where) / key
            if not os.path.isdir(dest):
                out.append(VerifyResult(key=key, scope=sc, path=dest, status="missing"))
                continue
            d = local_drift(rec, dest)
            out.append(
                VerifyResult(
                    key=key,
                    scope=sc,
                    path=dest,
                    status="modified" if d else "ok",
                    changed=d.changed,
                    added=d.added,
                    removed=d.removed,
                    signature=rec.get("signature"),
                )
            )
    return out
