"""Undo a curator run from the snapshot it kept: lifecycle states and ``skills.json``.

Only what the run changed is put back, and only where it still stands as the run left it: a
skill the user or an agent has moved since (restored, pinned, deleted) is kept as it is now
and reported. Counters and activity timestamps recorded after the run are never rolled back.
By default the curator is paused afterwards, so the next automatic pass does not redo the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from lemon_skills import _fs
from lemon_skills.errors import ConfigError, CuratorError
from lemon_skills.paths import Scope
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.curator.report import RUN_FILE, SNAPSHOT_FILE, run_order
from lemon_skills.skills.curator.run import LOCK_WAIT_S, read_report, scope_cwd, write_report
from lemon_skills.skills.curator.state import reports_root, run_lock, update_state
from lemon_skills.skills.usage.store import (
    ClockFn,
    Record,
    UsageStore,
    iso,
    normalise,
    usage_path,
    utc_now,
)

#: The record fields a curator transition sets; ``pinned`` is never one of them.
LIFECYCLE_FIELDS: Final = ("lifecycle_state", "archived_at", "state_updated_at", "state_updated_by")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """One past run as listed by ``runs``."""

    run_id: str
    path: Path
    started_at: str | None
    summary: str | None
    changed: bool
    rolled_back: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RollbackResult:
    """What a rollback restored and what it left alone."""

    run_id: str
    scope: Scope
    restored: tuple[str, ...]
    reenabled: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    paused: bool
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "run_id": self.run_id,
            "scope": self.scope,
            "restored": list(self.restored),
            "reenabled": list(self.reenabled),
            "skipped": [{"name": n, "reason": r} for n, r in self.skipped],
            "paused": self.paused,
            "dry_run": self.dry_run,
        }


def runs(scope: Scope = "global", cwd: str | os.PathLike[str] | None = None) -> list[RunInfo]:
    """Every run of a scope that left a report, oldest first."""
    root = reports_root(scope, scope_cwd(scope, cwd))
    out = []
    for d in root.iterdir() if root.is_dir() else []:
        try:
            doc = read_report(d / RUN_FILE)
        except ConfigError:
            continue  # an unreadable run is not one we could roll back either
        out.append(
            RunInfo(
                run_id=d.name,
                path=d,
                started_at=doc.get("started_at"),
                summary=doc.get("summary"),
                changed=(d / SNAPSHOT_FILE).is_file(),
                rolled_back=isinstance(doc.get("rollback"), Mapping),
            )
        )
    return sorted(out, key=lambda r: run_order(r.run_id))


def rollback(
    scope: Scope = "global",
    cwd: str | os.PathLike[str] | None = None,
    run_id: str | None = None,
    *,
    dry_run: bool = False,
    pause: bool = True,
    clock: ClockFn = utc_now,
    wait: float = LOCK_WAIT_S,
) -> RollbackResult:
    """Restore the states a run changed (default: the latest run not yet rolled back).

    Raises:
        CuratorError: no such run, it changed nothing, or it was already rolled back.
        ConfigError: the snapshot or a state file is corrupt (nothing is changed).
    """
    where = scope_cwd(scope, cwd)
    info = _pick(scope, where, run_id)
    if dry_run:
        return _restore(scope, where, info, clock, pause=False, write=False)
    with run_lock(scope, where, wait=wait):
        return _restore(scope, where, info, clock, pause=pause, write=True)


def restore_plan(
    snapshot: Mapping[str, Any], current: Mapping[str, Any], disabled_now: frozenset[str]
) -> tuple[dict[str, Record], list[str], list[tuple[str, str]]]:
    """Which records to restore, which keys to re-enable, which to skip and why (pure)."""
    before = snapshot.get("records", {})
    disabled_before = set(snapshot.get("disabled", []))
    restores: dict[str, Record] = {}
    reenable: list[str] = []
    skipped: list[tuple[str, str]] = []
    for t in snapshot.get("transitions", []):
        name = t["name"]
        if name not in current:
            skipped.append((name, "its usage record no longer exists"))
            continue
        now_state = normalise(current[name])["lifecycle_state"]
        if now_state != t["to"]:
            skipped.append((name, f"changed since the run (now {now_state})"))
            continue
        restores[name] = _restored(normalise(current[name]), normalise(before.get(name)))
        if t["to"] == "archived" and name in disabled_now and name not in disabled_before:
            reenable.append(name)
    return restores, reenable, skipped


def _restore(
    scope: Scope, cwd: Path | None, info: RunInfo, clock: ClockFn, *, pause: bool, write: bool
) -> RollbackResult:
    snapshot = _read_snapshot(info.path / SNAPSHOT_FILE)
    sj = enablement.skills_json_path(scope, cwd)
    restores, reenable, skipped = _restore_usage(usage_path(scope, cwd), sj, snapshot, write)
    result = RollbackResult(
        run_id=info.run_id,
        scope=scope,
        restored=tuple(sorted(restores)),
        reenabled=tuple(reenable),
        skipped=tuple(skipped),
        paused=pause,
        dry_run=not write,
    )
    if not write:
        return result
    enablement.set_disabled_many(sj, reenable, False)
    _record(info, result, clock)
    if pause:
        update_state(scope, cwd, lambda s: replace(s, paused=True))
    return result


def _restore_usage(
    path: Path, sj: Path, snapshot: Mapping[str, Any], write: bool
) -> tuple[dict[str, Record], list[str], list[tuple[str, str]]]:
    """Plan the restore on the sidecar as it is now (under its lock when writing)."""
    plans = []

    def change(state: dict[str, Any]) -> None:
        skills = state.setdefault("skills", {})
        if not isinstance(skills, dict):
            raise ConfigError('"skills" must be an object keyed by skill key', path=path)
        disabled, _ = enablement.parse_state(
            _fs.read_json(sj, default=enablement.empty_state), path=sj
        )
        plans.append(restore_plan(snapshot, skills, disabled))
        if write:
            skills.update(plans[-1][0])

    store = UsageStore(path)
    if write:
        store.update(change)
    else:
        change(store.document())
    return plans[-1]


def _read_snapshot(path: Path) -> dict[str, Any]:
    snapshot = _fs.read_json(path, default=dict)
    transitions = snapshot.get("transitions")
    ok = (
        isinstance(transitions, list)
        and all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in transitions)
        and isinstance(snapshot.get("records"), dict)
        and isinstance(snapshot.get("disabled"), list)
    )
    if not ok:
        raise ConfigError("not a curator snapshot (transitions, records, disabled)", path=path)
    return snapshot


def _restored(current: Record, before: Record) -> Record:
    out = dict(current)
    for f in LIFECYCLE_FIELDS:
        if f in before:
            out[f] = before[f]
        else:
            out.pop(f, None)
    return normalise(out)


def _record(info: RunInfo, result: RollbackResult, clock: ClockFn) -> None:
    doc = read_report(info.path / RUN_FILE)
    doc["rollback"] = {**result.to_dict(), "rolled_back_at": iso(clock())}
    write_report(info.path, doc)


def _pick(scope: Scope, cwd: Path | None, run_id: str | None) -> RunInfo:
    known = runs(scope, cwd)
    if run_id is None:
        open_runs = [r for r in known if r.changed and not r.rolled_back]
        if not open_runs:
            raise CuratorError(
                f"no {scope} curator run left to roll back",
                hint="only runs that changed something keep a snapshot; "
                "see `lemon skill curator status`",
            )
        return open_runs[-1]
    found = next((r for r in known if r.run_id == run_id), None)
    if found is None:
        ids = ", ".join(r.run_id for r in known[-5:]) or "none yet"
        raise CuratorError(
            f"no {scope} curator run {run_id!r}", run_id=run_id, hint=f"recent runs: {ids}"
        )
    if not found.changed:
        raise CuratorError(f"run {run_id} changed nothing; nothing to roll back", run_id=run_id)
    if found.rolled_back:
        raise CuratorError(f"run {run_id} was already rolled back", run_id=run_id)
    return found
