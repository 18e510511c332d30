"""The pure half of installing: which skills a source offers, which to take, under which keys,
what the lock records, and whether an update needs a new approval.

Nothing here touches the disk; ``installer`` does the I/O around these decisions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from lemon_skills.errors import InstallError, SourceError
from lemon_skills.paths import Scope
from lemon_skills.skills.audit.model import AuditFinding, AuditReport
from lemon_skills.skills.format.model import SkillBundle
from lemon_skills.skills.format.naming import skill_key
from lemon_skills.skills.install.review import ApprovedBy
from lemon_skills.skills.install.sources import SourceSpec, Trust


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """A directory holding a SKILL.md inside a fetched source."""

    rel: str
    dir_name: str
    declared: str | None = None
    #: The plugin or extension the skill is part of, when the source is a bundle.
    bundle: SkillBundle | None = None

    def matches(self, wanted: str) -> bool:
        """True when the user's ``--skill`` value names this skill (``PLUGIN:SKILL``, or
        ``PLUGIN:*`` for every skill of one plugin or marketplace entry)."""
        if self.bundle is not None and wanted in (
            f"{self.bundle.name}:{self.dir_name}",
            f"{self.bundle.name}:*",
        ):
            return True
        return wanted in (self.rel, self.dir_name, self.declared)


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallPlan:
    """One skill to activate: its key, where it goes, and where it came from."""

    key: str
    scope: Scope
    destination: Path
    found: Found
    spec: SourceSpec
    replaces: bool = False


def choose(
    found: Sequence[Found], *, wanted: Sequence[str], all_: bool, source: str
) -> list[Found]:
    """Select the skills to install from what the source holds.

    Raises:
        SourceError: the source holds no skill, a wanted one is missing, or it holds several
            and neither ``wanted`` nor ``all_`` says which.
    """
    if not found:
        raise SourceError(
            f"no SKILL.md found in {source}",
            hint="looked at the root, skills/*/, */ and .agents/skills/*/; use --path SUBDIR",
        )
    names = ", ".join(f.rel or f.dir_name for f in found)
    if wanted:
        out: list[Found] = []
        for w in wanted:
            hit = [f for f in found if f.matches(w)]
            if not hit:
                raise SourceError(f"{source} has no skill named {w!r}; it holds: {names}")
            # ``PLUGIN:*`` names a whole plugin; any other name one skill.
            take = hit if w.endswith(":*") else hit[:1]
            out.extend(h for h in take if h not in out)
        return out
    if all_ or len(found) == 1:
        return list(found)
    raise SourceError(
        f"{source} holds {len(found)} skills: {names}",
        hint="choose with --skill NAME (repeatable) or install them all with --all",
    )


def key_for(found: Found, spec: SourceSpec, *, name: str | None = None) -> str:
    """The key a found skill is installed under: ``name``, else its SKILL.md ``name``, else
    its directory (the repository name for a skill at the root), made safe.

    Raises:
        InstallError: the name is path-like (``../evil``) or empty.
    """
    raw = name or found.declared or (found.dir_name if found.rel else spec.default_name)
    return skill_key(raw)


def plan_install(
    chosen: Sequence[Found],
    *,
    spec: SourceSpec,
    scope: Scope,
    skill_root: Path,
    existing: Collection[str],
    force: bool,
    name: str | None = None,
) -> list[InstallPlan]:
    """Plan the activation of each chosen skill; ``existing`` lists keys already on disk.

    Raises:
        InstallError: a key is taken and ``force`` is not set, two skills map to one key, or
            ``name`` is given for several skills.
    """
    if name is not None and len(chosen) > 1:
        raise InstallError(
            f"--name can only be used when installing a single skill ({len(chosen)} chosen)",
            hint="pick one with --skill NAME, or drop --name (name= in Python)",
        )
    plans: list[InstallPlan] = []
    for f in chosen:
        key = key_for(f, spec, name=name)
        dest = skill_root / key
        if any(p.key == key for p in plans):
            raise InstallError(f"two skills in {spec.raw} would both be installed as {key!r}")
        if key in existing and not force:
            raise InstallError(
                f"skill {key!r} is already installed at {dest}",
                hint=f"pass --force to replace it, or run `lemon skill update {key}`",
            )
        sub = "/".join(p for p in (spec.subdir, f.rel) if p)
        plans.append(
            InstallPlan(
                key=key,
                scope=scope,
                destination=dest,
                found=f,
                spec=spec.with_subdir(sub),
                replaces=key in existing,
            )
        )
    return plans


def lock_record(
    plan: InstallPlan,
    report: AuditReport,
    *,
    commit: str | None,
    trust: Trust,
    approved_by: ApprovedBy,
    now: datetime,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``skills.lock.json`` record of an activated skill."""
    stamp = now.isoformat(timespec="seconds")
    installed_at = (previous or {}).get("installed_at") or stamp
    return {
        "key": plan.key,
        "source": plan.spec.raw,
        "kind": plan.spec.kind,
        "location": plan.spec.location,
        "ref": plan.spec.ref,
        "path": plan.spec.subdir,
        "commit": commit,
        "content_hash": report.content_hash,
        "bundle_hash": report.bundle_hash,
        "files": dict(report.file_hashes),
        "scripts": list(report.scripts),
        "trust": trust,
        "audit": {
            "verdict": report.verdict,
            "scanner": report.scanner,
            "findings": [f.to_dict() for f in report.findings],
        },
        "approved_by": approved_by,
        "installed_at": installed_at,
        "updated_at": stamp,
        **({"bundle": plan.found.bundle.to_dict()} if plan.found.bundle else {}),
    }


def spec_from_record(rec: Mapping[str, Any]) -> SourceSpec:
    """Rebuild the source of an installed skill from its lock record.

    Raises:
        InstallError: the record lacks a source (not installed by lemon, or hand-edited).
    """
    kind, location = rec.get("kind"), rec.get("location")
    if kind not in ("local", "git", "github") or not isinstance(location, str):
        raise InstallError(
            f"skill {rec.get('key')!r} has no usable source in the lock",
            hint="reinstall it with `lemon skill install SOURCE --force`",
        )
    return SourceSpec(
        raw=str(rec.get("source") or location),
        kind=kind,
        location=location,
        ref=rec.get("ref"),
        subdir=str(rec.get("path") or ""),
    )


def new_findings(rec: Mapping[str, Any], report: AuditReport) -> tuple[AuditFinding, ...]:
    """Findings of ``report`` that the locked install did not have (by fingerprint)."""
    old = (rec.get("audit") or {}).get("findings") or []
    seen = {AuditFinding.from_dict(f).fingerprint for f in old if isinstance(f, dict)}
    return tuple(f for f in report.findings if f.fingerprint not in seen)


def needs_reapproval(rec: Mapping[str, Any], report: AuditReport) -> bool:
    """True when an update brings new findings or new scripts."""
    old_scripts = set(rec.get("scripts") or [])
    return bool(new_findings(rec, report)) or not set(report.scripts) <= old_scripts
