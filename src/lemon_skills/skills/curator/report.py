"""What a curator run leaves behind: the ``run.json`` document and its ``REPORT.md`` mirror.

Both are pure renderings of data; ``REPORT.md`` is always re-rendered from ``run.json`` so the
two never disagree after a review submission or a rollback is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from lemon_skills.skills.curator.plan import Plan
from lemon_skills.skills.usage.store import iso

VERSION: Final = 1
RUN_FILE: Final = "run.json"
REPORT_FILE: Final = "REPORT.md"
SNAPSHOT_FILE: Final = "snapshot.json"


def run_id_for(moment: datetime) -> str:
    """The start time in ISO-8601 basic format to the second, without the zone:
    ``20260506T000000``. A second run in the same second gets ``-2``, ``-3``... appended."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%S")


def run_order(run_id: str) -> tuple[str, int]:
    """Sort key putting run ids in start order (``...T000000`` < ``...T000000-2`` < ``-10``)."""
    base, _, n = run_id.partition("-")
    return base, int(n) if n.isdigit() else 1


def run_document(
    plan: Plan,
    *,
    run_id: str | None,
    scope: str,
    cwd: str | None,
    duration_ms: int,
    disabled: list[str],
    snapshot: bool,
) -> dict[str, Any]:
    """The ``run.json`` content of one pass (``run_id`` None for a dry run)."""
    counts = plan.counts
    return {
        "version": VERSION,
        "run_id": run_id,
        "dry_run": run_id is None,
        "started_at": iso(plan.now),
        "duration_ms": duration_ms,
        "scope": scope,
        "cwd": cwd,
        "thresholds": plan.thresholds.to_dict(),
        "auto_transitions": dict(counts),
        "counts": dict(counts),
        "summary": plan.summary,
        "review_required": plan.review_required,
        "candidate_count": len(plan.candidates),
        "archived": plan.names("archived"),
        "marked_stale": plan.names("stale"),
        "reactivated": plan.names("active"),
        "disabled": sorted(disabled),
        "state_transitions": [t.to_dict() for t in plan.transitions],
        "held": [h.to_dict() for h in plan.held],
        "candidates": [r.to_dict() for r in plan.candidates],
        "snapshot": SNAPSHOT_FILE if snapshot else None,
    }


def render_markdown(doc: Mapping[str, Any]) -> str:
    """``REPORT.md``: the human mirror of ``run.json``."""
    counts = doc.get("counts", {})
    lines = [
        "# Curator run",
        "",
        f"Started at: {doc.get('started_at')}",
        f"Scope: {doc.get('scope')}",
        f"Duration: {doc.get('duration_ms')} ms",
        f"Summary: {doc.get('summary')}",
        f"Review required: {'yes' if doc.get('review_required') else 'no'}",
        "",
        "## Auto-transitions",
        "",
        f"- Checked: {counts.get('checked', 0)}",
        f"- Marked stale: {counts.get('marked_stale', 0)}",
        f"- Archived: {counts.get('archived', 0)}",
        f"- Reactivated: {counts.get('reactivated', 0)}",
    ]
    lines += _section("State transitions", [_transition(t, doc) for t in doc["state_transitions"]])
    lines += _section("Held back", [_held(h) for h in doc.get("held", [])])
    lines += _section("Candidates", [_candidate(c) for c in doc["candidates"]])
    lines += ["", "## Review submission", "", *_submission(doc.get("review_submission"))]
    lines += ["", "## Undo", "", *_undo(doc)]
    return "\n".join(lines) + "\n"


def rollback_command(doc: Mapping[str, Any]) -> str:
    """The command that rolls this run back."""
    where = f" --project --cwd {doc['cwd']}" if doc.get("scope") == "project" else ""
    return f"lemon skill curator rollback {doc.get('run_id')}{where}"


def _section(title: str, items: list[str]) -> list[str]:
    return ["", f"## {title}", "", *(items or ["None."])]


def _transition(t: Mapping[str, Any], doc: Mapping[str, Any]) -> str:
    extra = "; disabled in skills.json" if t["name"] in doc.get("disabled", []) else ""
    return f"- {t['name']}: {t['from']} -> {t['to']} ({t['reason']}{extra})"


def _held(h: Mapping[str, Any]) -> str:
    return f"- {h['name']} ({h['state']}): {h['reason']}: {h['detail']}"


def _candidate(c: Mapping[str, Any]) -> str:
    idle = "unknown" if c.get("idle_days") is None else c["idle_days"]
    return (
        f"- {c['name']} state={c['lifecycle_state']} loads={c['load_count']} "
        f"writes={c['write_count']} idle_days={idle}"
    )


def _submission(sub: Any) -> list[str]:
    if not isinstance(sub, Mapping):
        return ["Not submitted."]
    lines = [
        f"- Run id: {sub.get('run_id', '')}",
        f"- Submitted at: {sub.get('submitted_at', '')}",
        f"- Status: {sub.get('status', '')}",
    ]
    if sub.get("session_key"):
        lines.append(f"- Session: {sub['session_key']}")
    if sub.get("error"):
        lines.append(f"- Error: {sub['error']}")
    return lines


def _undo(doc: Mapping[str, Any]) -> list[str]:
    rollback = doc.get("rollback")
    if isinstance(rollback, Mapping):
        restored = ", ".join(rollback.get("restored", [])) or "nothing"
        lines = [f"Rolled back at {rollback.get('rolled_back_at')}: restored {restored}."]
        lines += [f"- kept {s['name']}: {s['reason']}" for s in rollback.get("skipped", [])]
        return lines
    if not doc.get("snapshot"):
        return ["Nothing was changed, so there is nothing to undo."]
    return [
        "Nothing was deleted. The previous states are kept in snapshot.json; restore them with:",
        "",
        f"    {rollback_command(doc)}",
    ]
