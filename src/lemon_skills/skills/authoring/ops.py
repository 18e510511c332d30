"""The write side of skills for agents: create, edit, patch, files, delete, lifecycle, report.

Only ``<agent>/skill`` (global) and ``<cwd>/.lemon/skill`` (project) are writable. A content
change is staged in a hidden copy of the skill, run through ``authoring.gate`` and only then
written into place file by file with atomic renames, so a blocked change never lands and a
reader never sees half a skill. One lock per skill serialises concurrent writers.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lemon_skills import _fs
from lemon_skills.errors import SkillWriteError
from lemon_skills.paths import Scope, scope_skill_dir
from lemon_skills.skills.authoring import consent
from lemon_skills.skills.authoring import rules as authoring
from lemon_skills.skills.authoring.rules import SKILL_FILE, GateVerdict
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.catalog.registry import default_registry
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.install.lifecycle import uninstall
from lemon_skills.skills.usage.report import format_report, store_report
from lemon_skills.skills.usage.store import (
    DEFAULT_ARCHIVE_DAYS,
    DEFAULT_STALE_DAYS,
    ClockFn,
    UsageStore,
)
from lemon_skills.skills.usage.store import utc_now as _utc_now


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What an accepted action did: the model-facing text and the structured details."""

    text: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        """A detail value, or None."""
        return self.details.get(key)


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """Where an action writes: scope, its skill root and (for named actions) the skill."""

    scope: Scope
    cwd: Path | None
    root: Path
    name: str = ""
    agent_id: str | None = None
    clock: ClockFn = _utc_now

    @property
    def skill_dir(self) -> Path:
        """The skill's directory under the root."""
        return self.root / self.name

    def usage(self) -> UsageStore:
        """The scope's usage sidecar."""
        return UsageStore.for_scope(self.scope, self.cwd, clock=self.clock)


def target(
    scope: Scope,
    cwd: Path | None,
    name: str = "",
    *,
    agent_id: str | None = None,
    clock: ClockFn = _utc_now,
) -> Target:
    """Resolve the writable root of ``scope``.

    Raises:
        SkillWriteError: the project scope without a cwd.
    """
    if scope == "project" and cwd is None:
        raise SkillWriteError(
            "project scope requires cwd", hint="pass the project directory, or use scope global"
        )
    root = scope_skill_dir(scope, cwd)
    return Target(scope=scope, cwd=cwd, root=root, name=name, agent_id=agent_id, clock=clock)


def run(action: str, t: Target, params: Mapping[str, Any]) -> Outcome:
    """Perform ``action`` on ``t`` with the tool parameters; the registry sees it at once.

    Raises:
        SkillWriteError: the action was refused (nothing changed).
        ConfigError: skills.json or the usage sidecar is corrupt (left untouched).
    """
    handler = _ACTIONS.get(action)
    if handler is None:
        raise SkillWriteError(
            f"Unknown action '{action}'. Use create, edit, patch, delete, write_file, "
            "remove_file, pin, unpin, archive, restore, or report."
        )
    if action == "report":
        return handler(t, params)
    if not t.name:
        raise SkillWriteError("missing required string parameter: name")
    if action != "create":
        _existing(t)
    # The lock lives beside the scope's state, not in the skills root: a lock file left by a
    # deleted skill must not sit among the skills.
    with _fs.locked(t.root.parent / "locks" / f"skill-{t.name}"):
        if action != "create":
            _existing(t)  # again under the lock: another writer may have deleted it
            consent.authorise(t, action, params)
        outcome = handler(t, params)
    default_registry().invalidate()
    return outcome


def _create(t: Target, p: Mapping[str, Any]) -> Outcome:
    content = _text_param(p, "content")
    notes = authoring.check_skill_md(content)
    if os.path.lexists(t.skill_dir):
        raise SkillWriteError(
            f"Skill '{t.name}' already exists at {t.skill_dir}",
            hint="use action edit or patch to change it, or pick another name",
        )
    with _staged(t, copy=False) as stage:
        _apply(stage, {SKILL_FILE: content})
        verdict = _gate_or_raise(stage, t.name)
        consent.authorise_create(t, p, shadows=_would_hide(t), warnings=verdict.audit_warnings)
        os.rename(stage, t.skill_dir)
    t.usage().record_created(t.name, agent_id=t.agent_id)
    return _written(t, "create", f"Skill '{t.name}' created at {t.skill_dir}.", verdict, notes)


def _would_hide(t: Target) -> Path | None:
    """The skill a new ``t`` would take the key from: the one the scope resolves it to now."""
    registry = default_registry()
    registry.invalidate()  # a skill the user added a moment ago counts
    view = registry.view(t.cwd if t.scope == "project" else None)
    entry = view.by_key.get(t.name)
    return None if entry is None or entry.source == "mcp" else entry.path


def _edit(t: Target, p: Mapping[str, Any]) -> Outcome:
    content = _text_param(p, "content")
    notes = authoring.check_skill_md(content)
    verdict = _commit(t, {SKILL_FILE: content})
    return _written(t, "edit", f"Skill '{t.name}' updated.", verdict, notes)


def _patch(t: Target, p: Mapping[str, Any]) -> Outcome:
    rel = authoring.supporting_path(p.get("file_path"), allow_skill_md=True) or SKILL_FILE
    old = p.get("old_string")
    if not isinstance(old, str) or not old.strip():
        raise SkillWriteError("old_string must be a non-empty string")
    new = p.get("new_string")
    if not isinstance(new, str):
        raise SkillWriteError("missing required string parameter: new_string (may be empty)")
    authoring.refuse_symlinks(t.skill_dir, rel)
    current = _read_existing(t.skill_dir / rel, rel)
    count = current.count(old)
    if count == 0:
        raise SkillWriteError(
            "old_string was not found",
            hint="read the file again with read_skill and copy the exact text, whitespace included",
        )
    if count > 1 and p.get("replace_all") is not True:
        raise SkillWriteError(
            f"old_string matched {count} times; pass replace_all=true to replace all, "
            "or include more surrounding text so it matches once"
        )
    updated = current.replace(old, new) if count > 1 else current.replace(old, new, 1)
    notes = authoring.check_skill_md(updated) if rel == SKILL_FILE else []
    if rel != SKILL_FILE:
        authoring.check_supporting(updated)
    verdict = _commit(t, {rel: updated})
    text = f"Patched {rel} in skill '{t.name}' ({count} replacement(s))."
    return _written(t, "patch", text, verdict, notes, file_path=rel, replacements=count)


def _write_file(t: Target, p: Mapping[str, Any]) -> Outcome:
    rel = authoring.supporting_path(p.get("file_path"))
    content = p.get("file_content")
    if not isinstance(content, str):
        raise SkillWriteError("missing required string parameter: file_content (may be empty)")
    authoring.check_supporting(content)
    authoring.refuse_symlinks(t.skill_dir, rel)
    if (t.skill_dir / rel).is_dir():
        raise SkillWriteError(f"file_path '{rel}' is a folder; name a file inside it")
    verdict = _commit(t, {rel: content})
    text = f"File '{rel}' written to skill '{t.name}'."
    return _written(t, "write_file", text, verdict, [], file_path=rel)


def _remove_file(t: Target, p: Mapping[str, Any]) -> Outcome:
    rel = authoring.supporting_path(p.get("file_path"))
    authoring.refuse_symlinks(t.skill_dir, rel)
    try:
        regular = stat.S_ISREG(os.lstat(t.skill_dir / rel).st_mode)
    except FileNotFoundError:
        regular = False
    if not regular:
        raise SkillWriteError(f"File not found: {rel}")
    verdict = _commit(t, {rel: None})
    text = f"File '{rel}' removed from skill '{t.name}'."
    return _written(t, "remove_file", text, verdict, [], file_path=rel)


def _delete(t: Target, p: Mapping[str, Any]) -> Outcome:
    store = t.usage()
    _refuse_pinned(t, store, "delete")
    if t.name in lockfile.records(lockfile.lock_path(t.scope, t.cwd)):
        # Installed: the same path as `lemon skill uninstall`, so the lock stays consistent.
        uninstall(t.name, cwd=t.cwd, scope=t.scope)
        store.forget(t.name)
        return Outcome(text=f"Skill '{t.name}' uninstalled.", details=_base(t, "delete"))
    with _fs.scratch_dir(t.root, f".backup-{t.name}-") as trash:
        os.rename(t.skill_dir, trash / t.name)  # the skill vanishes at once, never half-deleted
    enablement.forget(enablement.skills_json_path(t.scope, t.cwd), t.name)
    store.forget(t.name)
    return Outcome(text=f"Skill '{t.name}' deleted.", details=_base(t, "delete"))


def _pin(t: Target, p: Mapping[str, Any]) -> Outcome:
    rec = t.usage().set_pinned(t.name, True, agent_id=t.agent_id)
    return _lifecycle(t, "pin", f"Skill '{t.name}' pinned.", rec)


def _unpin(t: Target, p: Mapping[str, Any]) -> Outcome:
    rec = t.usage().set_pinned(t.name, False, agent_id=t.agent_id)
    return _lifecycle(t, "unpin", f"Skill '{t.name}' unpinned.", rec)


def _archive(t: Target, p: Mapping[str, Any]) -> Outcome:
    store = t.usage()
    _refuse_pinned(t, store, "archive")
    enablement.set_disabled(enablement.skills_json_path(t.scope, t.cwd), t.name, True)
    rec = store.set_state(t.name, "archived", agent_id=t.agent_id)
    return _lifecycle(t, "archive", f"Skill '{t.name}' archived.", rec)


def _restore(t: Target, p: Mapping[str, Any]) -> Outcome:
    enablement.set_disabled(enablement.skills_json_path(t.scope, t.cwd), t.name, False)
    rec = t.usage().set_state(t.name, "active", agent_id=t.agent_id)
    text = f"Skill '{t.name}' restored."
    other: Scope = "project" if t.scope == "global" else "global"
    if other == "global" or t.cwd is not None:
        path = enablement.skills_json_path(other, t.cwd)
        state = enablement.load(path, None)
        if state.is_disabled(t.name):
            text += f" It is still disabled in the {other} scope ({path})."
    return _lifecycle(t, "restore", text, rec)


def _report(t: Target, p: Mapping[str, Any]) -> Outcome:
    rows = store_report(
        t.usage(),
        stale_after_days=_days(p.get("stale_after_days"), DEFAULT_STALE_DAYS),
        archive_after_days=_days(p.get("archive_after_days"), DEFAULT_ARCHIVE_DAYS),
    )
    return Outcome(
        text=format_report(t.scope, rows),
        details={"action": "report", "scope": t.scope, "skills": [r.to_dict() for r in rows]},
    )


ActionFn = Callable[["Target", Mapping[str, Any]], "Outcome"]

_ACTIONS: Final[dict[str, ActionFn]] = {
    "create": _create,
    "edit": _edit,
    "patch": _patch,
    "delete": _delete,
    "write_file": _write_file,
    "remove_file": _remove_file,
    "pin": _pin,
    "unpin": _unpin,
    "archive": _archive,
    "restore": _restore,
    "report": _report,
}
#: Every action, in the order the tool documents them.
ACTIONS: Final = tuple(_ACTIONS)


def _existing(t: Target) -> None:
    try:
        mode = os.lstat(t.skill_dir).st_mode
    except FileNotFoundError:
        raise SkillWriteError(
            f"Skill '{t.name}' not found at {t.skill_dir}", hint=_elsewhere(t)
        ) from None
    if stat.S_ISLNK(mode):
        raise SkillWriteError(
            f"Skill '{t.name}' at {t.skill_dir} is a symlink to {os.readlink(t.skill_dir)}; "
            "skill_manage only changes skills stored in place"
        )
    if not stat.S_ISDIR(mode):
        raise SkillWriteError(f"Skill '{t.name}' not found at {t.skill_dir} (not a folder)")
    try:
        file_mode = os.lstat(t.skill_dir / SKILL_FILE).st_mode
    except FileNotFoundError:
        file_mode = 0
    if stat.S_ISLNK(file_mode):
        raise SkillWriteError(f"refusing to write through symlink: {SKILL_FILE}")
    if not stat.S_ISREG(file_mode):
        raise SkillWriteError(f"Skill '{t.name}' is missing SKILL.md")


def _elsewhere(t: Target) -> str:
    other: Scope = "global" if t.scope == "project" else "project"
    if other == "project" and t.cwd is None:
        return "create it with action create, or check the name with read_skill"
    if (scope_skill_dir(other, t.cwd) / t.name).is_dir():
        return f"a skill with that name exists in the {other} scope: pass scope {other}"
    return "create it with action create, or check the name and scope"


def _refuse_pinned(t: Target, store: UsageStore, verb: str) -> None:
    if store.is_pinned(t.name):
        raise SkillWriteError(
            f"Skill '{t.name}' is pinned; unpin it before {verb}.",
            hint=f"only if the user agrees: action unpin, then {verb}",
        )


def _commit(t: Target, changes: Mapping[str, str | None]) -> GateVerdict:
    """Apply ``changes`` (rel path -> text, None deletes) to a staged copy, gate, then land."""
    with _staged(t, copy=True) as stage:
        _apply(stage, changes)
        verdict = _gate_or_raise(stage, t.name)
        for rel in changes:
            authoring.refuse_symlinks(t.skill_dir, rel)  # re-checked: the tree may have moved
        _apply(t.skill_dir, changes)
    return verdict


@contextmanager
def _staged(t: Target, *, copy: bool) -> Iterator[Path]:
    with _fs.scratch_dir(t.root, f".staging-{t.name}-") as holder:
        stage = holder / t.name
        if copy:
            shutil.copytree(t.skill_dir, stage, symlinks=True)
        else:
            stage.mkdir()
        yield stage


#: Mode of new skill files; a replaced file keeps its own mode (a script stays executable).
NEW_FILE_MODE: Final = 0o644


def _apply(root: Path, changes: Mapping[str, str | None]) -> None:
    for rel, text in changes.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
            continue
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
        except FileNotFoundError:
            mode = NEW_FILE_MODE
        _fs.write_text_atomic(path, text, mode=mode)


def _gate_or_raise(stage: Path, name: str) -> GateVerdict:
    verdict = authoring.gate(stage, name=name)
    if verdict.status == "block":
        shown = "; ".join(verdict.blocking[:3]) or "blocked"
        raise SkillWriteError(
            f"Skill blocked by security audit: {shown}",
            hint="remove the flagged content and retry; nothing was written",
        )
    return verdict


def _read_existing(path: Path, rel: str) -> str:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise SkillWriteError(f"File not found: {rel}")
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SkillWriteError(f"File not found: {rel}") from None
    except UnicodeDecodeError:
        raise SkillWriteError(f"{rel} is not UTF-8 text; it cannot be patched") from None


def _text_param(p: Mapping[str, Any], key: str) -> str:
    value = p.get(key)
    if not isinstance(value, str):
        raise SkillWriteError(f"missing required string parameter: {key}")
    return value


def _days(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else default


def _base(t: Target, action: str) -> dict[str, Any]:
    return {"action": action, "name": t.name, "scope": t.scope, "path": str(t.skill_dir)}


def _written(
    t: Target,
    action: str,
    text: str,
    verdict: GateVerdict,
    notes: list[str],
    *,
    file_path: str | None = None,
    replacements: int | None = None,
) -> Outcome:
    details = _base(t, action)
    details["audit"] = verdict.to_dict()
    if file_path is not None:
        details["file_path"] = file_path
    if replacements is not None:
        details["replacements"] = replacements
    warnings = [*notes, *verdict.findings]
    if warnings:
        text += "\nWarnings (the skill was written; fix them when you can):\n" + "\n".join(
            f"- {w}" for w in warnings[:10]
        )
    return Outcome(text=text, details=details)


def _lifecycle(t: Target, action: str, text: str, rec: Mapping[str, Any]) -> Outcome:
    details = _base(t, action)
    details["lifecycle_state"] = rec["lifecycle_state"]
    details["pinned"] = rec["pinned"]
    return Outcome(text=text, details=details)
