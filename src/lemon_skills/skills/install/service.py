"""The install facade: ``install``, ``update``, ``uninstall`` and ``verify``.

Global scope by default (``<agent dir>/skill``); ``global_=False`` or ``scope="project"``
installs into ``<cwd>/.lemon/skill``. See ``approval`` for how changes are approved.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack

from lemon_skills._proc import ProgressFn
from lemon_skills.errors import InstallError
from lemon_skills.paths import PathArg, Scope, explicit_scope, resolve_cwd, scope_skill_dir
from lemon_skills.skills.audit.model import AuditReport
from lemon_skills.skills.catalog import discovery
from lemon_skills.skills.catalog.registry import view
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.install import apply as installer
from lemon_skills.skills.install import lockfile, signature
from lemon_skills.skills.install.apply import Policy
from lemon_skills.skills.install.plan import choose, plan_install
from lemon_skills.skills.install.review import Approver
from lemon_skills.skills.install.sources import resolve


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallResult:
    """One installed skill: where it is, its entry, its audit and its lock record."""

    key: str
    scope: Scope
    path: Path
    entry: Entry | None
    report: AuditReport
    record: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "key": self.key,
            "scope": self.scope,
            "path": str(self.path),
            "commit": self.record.get("commit"),
            "audit": self.report.to_dict(),
            "approved_by": self.record.get("approved_by"),
        }


class InstallOptions(TypedDict, total=False):
    """The keyword options ``install`` passes on to ``install_many`` (see there)."""

    cwd: PathArg
    global_: bool | None
    scope: Scope | None
    approve: bool
    approver: Approver | None
    allow_warnings: bool
    force: bool
    ref: str | None
    path: str | None
    name: str | None
    progress: ProgressFn | None
    require_signature: bool
    identity: str | None
    issuer: str | None
    trust_root: PathArg
    signing_key: PathArg


def install(source: str, *, skill: str | None = None, **options: Unpack[InstallOptions]) -> Entry:
    """Install one skill from a local directory, a git URL or ``gh:owner/repo``.

    ``skill`` picks one from a source holding several; ``name`` installs it under another
    key; the other options are ``install_many``'s. Returns the installed entry.

    Raises:
        SourceError: the source cannot be resolved or fetched, or holds no (or several) skills.
        InstallError: the key is taken (pass ``force=True``), the name is unsafe, or
            activation failed; nothing was changed.
        TrustPolicyViolation: the audit blocked it or approval was denied or missing.
    """
    results = install_many(source, skills=[skill] if skill else [], **options)
    entry = results[0].entry
    if entry is None:
        raise InstallError(f"installed {results[0].path} but it does not load as a skill")
    return entry


def install_many(
    source: str,
    *,
    cwd: PathArg = None,
    global_: bool | None = True,
    scope: Scope | None = None,
    approve: bool = False,
    approver: Approver | None = None,
    allow_warnings: bool = False,
    force: bool = False,
    ref: str | None = None,
    path: str | None = None,
    skills: Sequence[str] = (),
    all_: bool = False,
    name: str | None = None,
    progress: ProgressFn | None = None,
    now: datetime | None = None,
    require_signature: bool = False,
    identity: str | None = None,
    issuer: str | None = None,
    trust_root: PathArg = None,
    signing_key: PathArg = None,
) -> list[InstallResult]:
    """Install the chosen skills (``skills``, or ``all_``) of a source as one transaction.

    Every skill is audited and approved before any is activated; if one fails, none is
    installed. A skill with a signature (``skill.sigstore.json``) is verified against the
    identity, issuer, trust root or key given here or in skills.json ``signatures``; with
    ``require_signature`` (or ``"signatures": "required"``) an unsigned one is refused.
    Raises as ``install``; a signature that does not verify raises ``TrustPolicyViolation``.
    """
    where = resolve_cwd(cwd)
    sc = explicit_scope(global_, scope) or "global"
    spec = resolve(source, ref=ref, path=path, cwd=where)
    skill_root = scope_skill_dir(sc, where)
    policy = Policy(approve=approve, approver=approver, allow_warnings=allow_warnings)
    trust = signature.trust_for(
        where,
        signature.Trust(
            required=require_signature,
            identity=identity,
            issuer=issuer,
            trust_root=Path(trust_root) if trust_root is not None else None,
            key=Path(signing_key) if signing_key is not None else None,
        ),
    )
    with installer.staging(skill_root) as stage:
        fetched = installer.fetch(spec, stage, progress)
        chosen = choose(
            installer.find_skills(fetched.root), wanted=skills, all_=all_, source=spec.raw
        )
        existing = {p.name for p in skill_root.iterdir() if not p.name.startswith(".")}
        plans = plan_install(
            chosen,
            spec=spec,
            scope=sc,
            skill_root=skill_root,
            existing=existing,
            force=force,
            name=name,
        )
        staged = [installer.stage_skill(p, fetched.root) for p in plans]
        # Before approval: a signature that does not verify is refused, not offered for review.
        staged = [
            replace(s, signature=signature.record(s.path, trust, key=s.plan.key)) for s in staged
        ]
        decisions = installer.approve_all(staged, policy, commit=fetched.commit)
        records = installer.activate_all(
            staged,
            decisions,
            lock=lockfile.lock_path(sc, where),
            commit=fetched.commit,
            now=now or datetime.now(UTC),
        )
    installer.invalidate_registry()
    return [
        InstallResult(
            key=s.plan.key,
            scope=sc,
            path=s.plan.destination,
            entry=load_entry(s.plan.destination, sc, where),
            report=s.report,
            record=rec,
        )
        for s, rec in zip(staged, records, strict=True)
    ]


def load_entry(path: Path, scope: Scope, cwd: Path | None = None) -> Entry | None:
    """The entry of the skill at ``path``: the registry's (with its enabled state) when it is
    the visible one, else parsed directly (a project skill may shadow a global one)."""
    visible = view(cwd).by_key.get(path.name)
    if visible is not None and visible.path == path:
        return visible
    sig = discovery.file_sig(path / discovery.SKILL_FILE)
    if sig is None:
        return None
    cand = discovery.Candidate(
        path.name,
        path,
        path.parent,
        scope,
        sig,
        os.path.realpath(path),
        str(path / discovery.SKILL_FILE),
    )
    return discovery.load_candidate(cand).entry
