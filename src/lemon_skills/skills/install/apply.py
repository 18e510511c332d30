"""The I/O half of installing: stage, audit, ask, activate atomically, record, roll back.

Every change follows one path: fetch into ``<skill dir>/.staging-<random>`` (skipped by
discovery, on the same filesystem as the destination), audit and lint what was fetched, ask
for approval, then rename into place (the old directory, if any, is first renamed to a
``.backup-`` name) and write the lock record. Any failure or denial before the end puts the
directories and the lock back exactly as they were; the staging directory is always removed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from lemon_skills import _fs
from lemon_skills._proc import ProgressFn
from lemon_skills.errors import InstallError, LemonSkillsError, ManifestError
from lemon_skills.skills.audit.model import AuditFinding, AuditReport
from lemon_skills.skills.audit.scan import audit
from lemon_skills.skills.catalog.discovery import Scan
from lemon_skills.skills.catalog.registry import default_registry
from lemon_skills.skills.format.bundle import collect
from lemon_skills.skills.format.lint import lint_text
from lemon_skills.skills.format.manifest import parse_skill
from lemon_skills.skills.hosts import plugins
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.install.plan import Found, InstallPlan, lock_record
from lemon_skills.skills.install.review import (
    ApprovalRequest,
    ApprovedBy,
    Approver,
    Operation,
    decide,
)
from lemon_skills.skills.install.sources import Fetched, SourceSpec, source_for

#: Directory names searched for skills when a source's root is not itself a skill.
_CONTAINERS = ("skills", ".agents/skills", ".claude/skills")
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Staged:
    """A fetched skill directory with its audit, ready to be approved and activated."""

    plan: InstallPlan
    path: Path
    report: AuditReport
    lint: tuple[str, ...] = ()
    #: The verified signature (what the lock records), None for an unsigned skill.
    signature: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """How a caller approves: pre-approval, a callback, acceptance of warnings."""

    approve: bool = False
    approver: Approver | None = None
    allow_warnings: bool = False


@contextlib.contextmanager
def staging(skill_root: Path) -> Iterator[Path]:
    """A private scratch directory next to the destination, removed whatever happens.

    Staging and backup directories a killed process left behind are swept first.
    """
    with _fs.scratch_dir(skill_root, ".staging-") as path:
        yield path


def fetch(spec: SourceSpec, stage: Path, progress: ProgressFn | None) -> Fetched:
    """Fetch ``spec`` into ``stage/src``.

    Raises:
        SourceError: the source cannot be fetched.
    """
    return source_for(spec).fetch(spec, stage / "src", progress=progress)


def find_skills(root: Path) -> list[Found]:
    """The skills a fetched tree offers: the root itself, or skill dirs below it."""
    if _has_skill_file(root):
        return [_found(root, "")]
    out: list[Found] = []
    for container in ("", *_CONTAINERS):
        base = root / container if container else root
        if not base.is_dir() or base.is_symlink():
            continue
        for child in sorted(base.iterdir()):
            rel = f"{container}/{child.name}" if container else child.name
            if child.name in _SKIP_DIRS or child.is_symlink() or not child.is_dir():
                continue
            if _has_skill_file(child):
                out.append(_found(child, rel))
            elif container == "skills":
                # Large collections group skills by category: skills/<category>/<skill>/.
                out.extend(
                    _found(g, f"{rel}/{g.name}")
                    for g in sorted(child.iterdir())
                    if g.is_dir() and not g.is_symlink() and _has_skill_file(g)
                )
    return _with_bundles(root, out)


def _with_bundles(root: Path, found: list[Found]) -> list[Found]:
    """``found`` plus the skills of the plugin, extension or marketplace at ``root``, each
    carrying its bundle (a marketplace's plugins live below ``skills/``)."""
    by_rel = {f.rel: f for f in found}
    for sd in plugins.find(root, Scan()):
        if not sd.path.is_dir() or sd.path.is_symlink():
            continue
        # The lock keeps where the plugin sits inside the source, not the staging copy.
        bundle = replace(sd.bundle, root=Path(sd.bundle.root).relative_to(root).as_posix())
        for child in sorted(sd.path.iterdir()):
            if sd.only is not None and child.name not in sd.only:
                continue
            if child.is_symlink() or not child.is_dir() or not _has_skill_file(child):
                continue
            rel = child.relative_to(root).as_posix()
            by_rel[rel] = replace(_found(child, rel), bundle=bundle)
    return [by_rel[r] for r in sorted(by_rel)]


def _has_skill_file(d: Path) -> bool:
    return (d / "SKILL.md").is_file() or (d / "SKILL.md").is_symlink()


def _found(d: Path, rel: str) -> Found:
    declared = None
    skill_file = d / "SKILL.md"
    if not skill_file.is_symlink():
        with contextlib.suppress(OSError, UnicodeDecodeError, ManifestError):
            declared = parse_skill(skill_file.read_bytes().decode("utf-8")).manifest.name
    return Found(rel=rel, dir_name=d.name, declared=declared)


def stage_skill(plan: InstallPlan, root: Path) -> Staged:
    """Audit and lint the fetched directory of one planned skill.

    Raises:
        InstallError: its SKILL.md cannot be read or parsed.
    """
    path = root / plan.found.rel if plan.found.rel else root
    bundle = collect(path)
    report = audit(bundle, name=plan.key)
    raw = bundle.files.get("SKILL.md")
    if raw is None:
        if "SKILL.md" in bundle.symlinks:
            return Staged(plan=plan, path=path, report=report)
        raise InstallError(f"{plan.spec.raw}: no SKILL.md in {plan.found.rel or 'the root'}")
    try:
        text = raw.decode("utf-8")
        parse_skill(text)
    except (UnicodeDecodeError, ManifestError) as exc:
        raise InstallError(
            f"{plan.spec.raw}: invalid SKILL.md in {plan.found.rel or 'the root'}: {exc}",
            hint="fix the frontmatter upstream; `lemon skill lint DIR` shows every problem",
        ) from exc
    lint = tuple(
        f"[{f.severity}] {f.rule}: {f.message}"
        for f in lint_text(text, dir_name=plan.key)
        if f.rule != "invisible-unicode"  # the audit reports those, with the hidden text
    )
    return Staged(plan=plan, path=path, report=report, lint=lint)


def request_for(
    staged: Staged,
    *,
    operation: Operation = "install",
    commit: str | None,
    new: tuple[AuditFinding, ...] | None = None,
) -> ApprovalRequest:
    """The approval request of a staged skill; ``new`` defaults to every finding."""
    r = staged.report
    return ApprovalRequest(
        operation=operation,
        key=staged.plan.key,
        source=staged.plan.spec.raw,
        destination=staged.plan.destination,
        scope=staged.plan.scope,
        verdict=r.verdict,
        findings=r.findings,
        new_findings=r.findings if new is None else new,
        files=r.files,
        scripts=r.scripts,
        commit=commit,
        replaces=staged.plan.replaces,
        lint=staged.lint,
    )


@dataclass(slots=True)
class Activation:
    """Renames staged dirs into place and writes lock records, undoing all of it on failure."""

    lock: Path
    _moved: list[tuple[Path, Path | None]] = field(default_factory=list)
    _records: list[tuple[str, dict[str, Any] | None]] = field(default_factory=list)

    def activate(self, staged: Path, dest: Path) -> None:
        """Move ``staged`` to ``dest``, keeping any existing ``dest`` as a backup.

        Raises:
            InstallError: a rename failed (the previous directory is back in place).
        """
        backup = None
        try:
            if os.path.lexists(dest):
                backup = dest.parent / f".backup-{dest.name}-{secrets.token_hex(6)}"
                os.rename(dest, backup)
            os.rename(staged, dest)
        except OSError as exc:
            if backup is not None and os.path.lexists(backup):
                os.rename(backup, dest)
            raise InstallError(f"cannot move the new skill into {dest}: {exc.strerror}") from exc
        self._moved.append((dest, backup))

    def record(self, key: str, rec: dict[str, Any]) -> None:
        """Write ``key``'s lock record, remembering the one it replaces."""
        self._records.append((key, lockfile.put(self.lock, key, rec)))

    def rollback(self) -> None:
        """Restore every lock record and directory touched so far, newest first.

        Each step is attempted even if an earlier one fails, so the directories always come
        back; the first failure is re-raised afterwards.
        """
        errors: list[Exception] = []
        for key, previous in reversed(self._records):
            try:
                lockfile.put(self.lock, key, previous)
            except (LemonSkillsError, OSError) as exc:
                errors.append(exc)
        for dest, backup in reversed(self._moved):
            try:
                _fs.remove_tree(dest)
                if backup is not None:
                    os.rename(backup, dest)
            except OSError as exc:
                errors.append(exc)
        self._records.clear()
        self._moved.clear()
        if errors:
            raise errors[0]

    def commit(self) -> None:
        """Drop the backups: the change is final."""
        for _, backup in self._moved:
            if backup is not None:
                _fs.remove_tree(backup)

    def __enter__(self) -> Activation:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


def approve_all(
    staged: Sequence[Staged], policy: Policy, *, commit: str | None
) -> list[ApprovedBy]:
    """Decide on every staged skill before any is activated (one denial stops them all).

    Raises:
        TrustPolicyViolation: a skill is blocked, denied or unapproved.
    """
    return [
        decide(
            request_for(s, commit=commit),
            approve=policy.approve,
            approver=policy.approver,
            allow_warnings=policy.allow_warnings,
        )
        for s in staged
    ]


def activate_all(
    staged: Sequence[Staged],
    decisions: Sequence[ApprovedBy],
    *,
    lock: Path,
    commit: str | None,
    now: datetime,
) -> list[dict[str, Any]]:
    """Activate and record every staged skill as one transaction; return the lock records.

    Raises:
        InstallError: an activation failed (everything was rolled back).
        ConfigError: the lockfile is corrupt (everything was rolled back).
    """
    trust = source_for(staged[0].plan.spec).trust if staged else "community"
    recs = []
    # Serialise activations in a scope so two installs of one key cannot both "win".
    with _fs.locked(lock.with_name(".skill-install")), Activation(lock) as act:
        previous = lockfile.records(lock)
        for s, how in zip(staged, decisions, strict=True):
            if not s.plan.replaces and os.path.lexists(s.plan.destination):
                raise InstallError(
                    f"skill {s.plan.key!r} was installed at {s.plan.destination} meanwhile",
                    hint="pass --force to replace it",
                )
            rec = lock_record(
                s.plan,
                s.report,
                commit=commit,
                trust=trust,
                approved_by=how,
                now=now,
                previous=previous.get(s.plan.key) if s.plan.replaces else None,
            )
            if s.signature is not None:
                rec["signature"] = dict(s.signature)
            act.activate(s.path, s.plan.destination)
            act.record(s.plan.key, rec)
            recs.append(rec)
    return recs


def invalidate_registry() -> None:
    """Make the registry notice the change on its next call."""
    default_registry().invalidate()
