"""The curator's I/O shell: apply a planned pass, snapshot first, write the run report.

A real pass re-reads the usage sidecar under its lock and plans on that fresh copy, so a skill
used a moment ago is never archived on stale data. Before any record changes, the affected
records and the scope's ``skills.json`` disabled list are saved to ``snapshot.json`` in the run
directory (``curator_rollback`` restores them). Archived skills are then disabled in the same
scope's ``skills.json``. Nothing is ever deleted. A dry run reads only and writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from lemon_skills import _fs
from lemon_skills.errors import ConfigError
from lemon_skills.paths import Scope, is_transient_name, resolve_cwd, scope_skill_dir
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.curator.plan import Plan, Thresholds, plan_curation, transition_record
from lemon_skills.skills.curator.prompt import review_prompt
from lemon_skills.skills.curator.report import (
    REPORT_FILE,
    RUN_FILE,
    SNAPSHOT_FILE,
    render_markdown,
    run_document,
    run_id_for,
)
from lemon_skills.skills.curator.state import reports_root, run_lock, update_state
from lemon_skills.skills.usage.store import VERSION as USAGE_VERSION
from lemon_skills.skills.usage.store import (
    ClockFn,
    UsageStore,
    iso,
    normalise,
    usage_path,
    utc_now,
)

#: How long an explicit run waits for another pass of the same scope to finish.
LOCK_WAIT_S: Final = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """One curator pass: the plan it applied and the report it wrote."""

    plan: Plan
    scope: Scope
    cwd: Path | None
    run_id: str | None
    run_dir: Path | None
    document: Mapping[str, Any]

    @property
    def dry_run(self) -> bool:
        """True when nothing was written."""
        return self.run_id is None

    @property
    def report_path(self) -> Path | None:
        """The run's ``run.json`` (None for a dry run)."""
        return None if self.run_dir is None else self.run_dir / RUN_FILE

    @property
    def review_prompt(self) -> str:
        """The review prompt for this pass's candidates."""
        return review_prompt(self.scope, self.plan.candidates)


def scope_cwd(scope: Scope, cwd: str | os.PathLike[str] | None) -> Path | None:
    """The cwd a scope needs: resolved for the project scope, None for the global one."""
    return resolve_cwd(cwd) if scope == "project" else None


def run(
    scope: Scope = "global",
    cwd: str | os.PathLike[str] | None = None,
    *,
    thresholds: Thresholds | None = None,
    now: datetime | None = None,
    clock: ClockFn = utc_now,
    dry_run: bool = False,
    wait: float = LOCK_WAIT_S,
) -> RunResult:
    """Run one curator pass over a scope (ignoring pause and interval: the caller asked).

    Raises:
        ConfigError: a state file is corrupt (nothing is changed).
        CuratorError: another pass of this scope is still running after ``wait`` seconds.
    """
    where = scope_cwd(scope, cwd)
    th = thresholds or Thresholds()
    moment = now or clock()
    if dry_run:
        return preview(scope, where, thresholds=th, now=moment)
    with run_lock(scope, where, wait=wait):
        return run_locked(scope, where, thresholds=th, now=moment)


def preview(scope: Scope, cwd: Path | None, *, thresholds: Thresholds, now: datetime) -> RunResult:
    """Plan a pass without writing anything (``--dry-run``)."""
    started = time.monotonic()
    records = UsageStore(usage_path(scope, cwd)).records()
    plan = plan_curation(records, now=now, thresholds=thresholds, present=_present(scope, cwd))
    disabled = _disabled_now(scope, cwd)
    would = [n for n in plan.names("archived") if n not in disabled]
    doc = _document(plan, None, scope, cwd, started, would, snapshot=False)
    return RunResult(plan=plan, scope=scope, cwd=cwd, run_id=None, run_dir=None, document=doc)


def run_locked(
    scope: Scope, cwd: Path | None, *, thresholds: Thresholds, now: datetime
) -> RunResult:
    """Run a pass; the caller holds ``run_lock`` for the scope."""
    started = time.monotonic()
    run_dir = _new_run_dir(scope, cwd, run_id_for(now))
    try:
        plan = _apply_usage(scope, cwd, thresholds, now, run_dir)
    except BaseException:
        with contextlib.suppress(OSError):
            run_dir.rmdir()
        raise
    sj = enablement.skills_json_path(scope, cwd)
    disabled = enablement.set_disabled_many(sj, plan.names("archived"), True)
    doc = _document(plan, run_dir.name, scope, cwd, started, disabled, bool(plan.transitions))
    write_report(run_dir, doc)
    update_state(
        scope,
        cwd,
        lambda s: replace(
            s,
            last_run_at=iso(now),
            last_run_id=run_dir.name,
            last_run_summary=plan.summary,
            last_candidate_count=len(plan.candidates),
            last_report_path=str(run_dir / RUN_FILE),
            run_count=s.run_count + 1,
        ),
    )
    return RunResult(
        plan=plan, scope=scope, cwd=cwd, run_id=run_dir.name, run_dir=run_dir, document=doc
    )


def write_report(run_dir: Path, doc: Mapping[str, Any]) -> None:
    """Write ``run.json`` and re-render ``REPORT.md`` from it."""
    _fs.write_json_atomic(run_dir / RUN_FILE, doc)
    _fs.write_text_atomic(run_dir / REPORT_FILE, render_markdown(doc))


def read_report(report_path: Path) -> dict[str, Any]:
    """Read a run's ``run.json``.

    Raises:
        ConfigError: it does not exist or is corrupt.
    """
    if not report_path.is_file():
        raise ConfigError("curator run report not found", path=report_path)
    return _fs.read_json(report_path, default=dict)


def record_review_submission(report_path: Path, submission: Mapping[str, Any]) -> dict[str, Any]:
    """Add ``review_submission`` (string values, None dropped) to a run and re-render its report.

    Raises:
        ConfigError: the run report does not exist or is corrupt.
    """
    doc = read_report(report_path)
    doc["review_submission"] = {k: str(v) for k, v in submission.items() if v is not None}
    write_report(report_path.parent, doc)
    return doc


def _apply_usage(
    scope: Scope, cwd: Path | None, th: Thresholds, now: datetime, run_dir: Path
) -> Plan:
    path = usage_path(scope, cwd)
    store = UsageStore(path)
    present = _present(scope, cwd)
    if not store.exists():
        return plan_curation({}, now=now, thresholds=th, present=present)
    plans: list[Plan] = []

    def change(state: dict[str, Any]) -> None:
        skills = state.get("skills", {})
        if not isinstance(skills, dict):
            raise ConfigError('"skills" must be an object keyed by skill key', path=path)
        records = {k: normalise(v) for k, v in skills.items()}
        plan = plan_curation(records, now=now, thresholds=th, present=present)
        plans.append(plan)
        if not plan.transitions:
            return
        _write_snapshot(run_dir, plan, records, scope, cwd)
        state.setdefault("version", USAGE_VERSION)
        for t in plan.transitions:
            skills[t.name] = transition_record(records[t.name], t.to_state, now)

    store.update(change)
    return plans[-1]


def _write_snapshot(
    run_dir: Path, plan: Plan, records: Mapping[str, Any], scope: Scope, cwd: Path | None
) -> None:
    disabled = _disabled_now(scope, cwd)
    _fs.write_json_atomic(
        run_dir / SNAPSHOT_FILE,
        {
            "version": 1,
            "run_id": run_dir.name,
            "scope": scope,
            "cwd": None if cwd is None else str(cwd),
            "taken_at": iso(plan.now),
            "usage_path": str(usage_path(scope, cwd)),
            "skills_json_path": str(enablement.skills_json_path(scope, cwd)),
            "records": {t.name: records[t.name] for t in plan.transitions},
            "disabled": sorted(disabled),
            "transitions": [t.to_dict() for t in plan.transitions],
        },
    )


def _document(
    plan: Plan,
    run_id: str | None,
    scope: Scope,
    cwd: Path | None,
    started: float,
    disabled: list[str],
    snapshot: bool,
) -> dict[str, Any]:
    return run_document(
        plan,
        run_id=run_id,
        scope=scope,
        cwd=None if cwd is None else str(cwd),
        duration_ms=int((time.monotonic() - started) * 1000),
        disabled=disabled,
        snapshot=snapshot,
    )


def _new_run_dir(scope: Scope, cwd: Path | None, base: str) -> Path:
    root = reports_root(scope, cwd)
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        candidate = root / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise ConfigError("too many curator runs with the same start time", path=root)


def _present(scope: Scope, cwd: Path | None) -> set[str]:
    root = scope_skill_dir(scope, cwd)
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise ConfigError(f"cannot list skills: {exc.strerror}", path=root) from exc
    return {n for n in names if not is_transient_name(n) and (root / n / "SKILL.md").is_file()}


def _disabled_now(scope: Scope, cwd: Path | None) -> frozenset[str]:
    sj = enablement.skills_json_path(scope, cwd)
    disabled, _ = enablement.parse_state(_fs.read_json(sj, default=enablement.empty_state), path=sj)
    return disabled
