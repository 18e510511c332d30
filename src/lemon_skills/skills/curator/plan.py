"""The curator's pure planner: usage records + ``now`` + thresholds -> lifecycle transitions.

Only agent-authored skills (``created_by: agent``) move, and only between active, stale and
archived; pinned and user skills are never touched and nothing is ever deleted. The rules, in
order, for an agent-authored skill that is active or stale:

1. stale but active again within ``stale_after_days`` -> active (reactivated);
2. never loaded and younger than ``grace_days`` -> held (grace period from its creation);
3. idle >= ``archive_after_days`` -> archived, except that a never-loaded skill first goes
   through stale and is archived only ``grace_days`` after it was marked stale;
4. idle >= ``stale_after_days`` and active -> stale.

``max_archives`` caps how many skills one run may archive (the most idle go first; the rest
are held and marked stale), so a host that comes back after months does not lose its library
in one pass. I/O lives in ``curator_run``; this module reads no file and no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

from lemon_skills.errors import ConfigError
from lemon_skills.skills.usage.report import ReportRow, usage_rows
from lemon_skills.skills.usage.store import (
    DEFAULT_ARCHIVE_DAYS,
    DEFAULT_STALE_DAYS,
    Record,
    days_since,
    iso,
    normalise,
)

DEFAULT_GRACE_DAYS: Final = 30
CURATOR_ACTOR: Final = "curator"
HoldReason = Literal["grace", "archive_limit", "missing", "no_activity"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    """When skills go stale and archived; validated on construction.

    Raises:
        ConfigError: a value is below 1, or ``archive_after_days < stale_after_days``.
    """

    stale_after_days: int = DEFAULT_STALE_DAYS
    archive_after_days: int = DEFAULT_ARCHIVE_DAYS
    grace_days: int = DEFAULT_GRACE_DAYS
    max_archives: int | None = None

    def __post_init__(self) -> None:
        for name in ("stale_after_days", "archive_after_days", "grace_days"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name.replace('_', '-')} must be at least 1 day")
        if self.archive_after_days < self.stale_after_days:
            raise ConfigError(
                f"archive-after-days ({self.archive_after_days}) must be at least "
                f"stale-after-days ({self.stale_after_days})"
            )
        if self.max_archives is not None and self.max_archives < 0:
            raise ConfigError("max-archives must be 0 or more")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True, kw_only=True)
class Transition:
    """One lifecycle change the curator makes."""

    name: str
    from_state: str
    to_state: str
    reason: str
    idle_days: int | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with ``from``/``to`` keys."""
        return {
            "name": self.name,
            "from": self.from_state,
            "to": self.to_state,
            "reason": self.reason,
            "idle_days": self.idle_days,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Hold:
    """A skill the rules would move but a safety rule keeps where it is."""

    name: str
    state: str
    reason: HoldReason
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "state": self.state,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The outcome of planning one pass: transitions, holds, counts and review candidates
    (after the transitions); ``rows`` are the agent-authored skills before them."""

    now: datetime
    thresholds: Thresholds
    checked: int
    transitions: tuple[Transition, ...] = ()
    held: tuple[Hold, ...] = ()
    candidates: tuple[ReportRow, ...] = ()
    rows: tuple[ReportRow, ...] = ()

    def names(self, to_state: str) -> list[str]:
        """Sorted names of the transitions into ``to_state``."""
        return sorted(t.name for t in self.transitions if t.to_state == to_state)

    @property
    def counts(self) -> dict[str, int]:
        """``checked``, ``marked_stale``, ``archived``, ``reactivated``."""
        return {
            "checked": self.checked,
            "marked_stale": len(self.names("stale")),
            "archived": len(self.names("archived")),
            "reactivated": len(self.names("active")),
        }

    @property
    def summary(self) -> str:
        """``checked=N stale=N archived=N reactivated=N``."""
        c = self.counts
        return (
            f"checked={c['checked']} stale={c['marked_stale']} archived={c['archived']} "
            f"reactivated={c['reactivated']}"
        )

    @property
    def review_required(self) -> bool:
        """True when an agent-authored skill is left that a review may consolidate."""
        return bool(self.candidates)


def skill_rows(
    records: Mapping[str, Mapping[str, Any]], *, now: datetime, thresholds: Thresholds
) -> list[ReportRow]:
    """The usage rows at the curator's thresholds."""
    return usage_rows(
        records,
        now=now,
        stale_after_days=thresholds.stale_after_days,
        archive_after_days=thresholds.archive_after_days,
    )


def plan_curation(
    records: Mapping[str, Mapping[str, Any]],
    *,
    now: datetime,
    thresholds: Thresholds | None = None,
    present: Collection[str] | None = None,
) -> Plan:
    """Plan one pass over ``records`` (pure).

    ``present`` is the set of skill keys that still exist on disk; a record outside it is held
    as ``missing`` (None skips that check).
    """
    th = thresholds or Thresholds()
    rows = [r for r in skill_rows(records, now=now, thresholds=th) if r.agent_authored]
    decisions = [_decide(r, normalise(records[r.name]), now, th, present) for r in rows]
    moves = [d for d in decisions if isinstance(d, Transition)]
    held = [d for d in decisions if isinstance(d, Hold)]
    moves, limited = _cap_archives(moves, {r.name: r for r in rows}, th)
    transitions = tuple(sorted(moves, key=lambda t: t.name))
    after = apply_plan(records, transitions, now)
    candidates = [r for r in skill_rows(after, now=now, thresholds=th) if r.reviewable]
    return Plan(
        now=now,
        thresholds=th,
        checked=len(rows),
        transitions=transitions,
        held=tuple(sorted([*held, *limited], key=lambda h: h.name)),
        candidates=tuple(candidates),
        rows=tuple(rows),
    )


def transition_record(rec: Mapping[str, Any], to_state: str, now: datetime) -> Record:
    """``rec`` moved to ``to_state`` by the curator (pure). Activity timestamps are untouched,
    so a curator move never makes a skill look used."""
    out = normalise(rec)
    out["lifecycle_state"] = to_state
    out["state_updated_at"] = iso(now)
    out["state_updated_by"] = CURATOR_ACTOR
    if to_state == "archived":
        out["archived_at"] = iso(now)
    return out


def apply_plan(
    records: Mapping[str, Mapping[str, Any]], transitions: Collection[Transition], now: datetime
) -> dict[str, Record]:
    """``records`` with ``transitions`` applied (pure)."""
    out = {k: normalise(v) for k, v in records.items()}
    for t in transitions:
        out[t.name] = transition_record(out[t.name], t.to_state, now)
    return out


def _decide(
    row: ReportRow,
    rec: Record,
    now: datetime,
    th: Thresholds,
    present: Collection[str] | None,
) -> Transition | Hold | None:
    if not row.reviewable:
        return None
    idle = row.idle_days
    if idle is None:
        return _hold(row, "no_activity", "no parsable activity timestamp; nothing to measure")
    if row.lifecycle_state == "stale" and idle < th.stale_after_days:
        return _move(row, "active", f"used again {idle} days ago")
    if idle < th.stale_after_days:
        return None
    if present is not None and row.name not in present:
        return _hold(row, "missing", "skill folder not found; left as it is")
    age = days_since(row.created_at, now)
    if row.never_used and age is not None and age < th.grace_days:
        return _hold(
            row, "grace", f"never used, created {age} days ago ({th.grace_days}-day grace)"
        )
    if idle >= th.archive_after_days:
        return _archive_or_stage(row, rec, now, th)
    if row.lifecycle_state == "active":
        return _move(row, "stale", f"idle {idle} days; stale after {th.stale_after_days}")
    return None


def _archive_or_stage(
    row: ReportRow, rec: Record, now: datetime, th: Thresholds
) -> Transition | Hold:
    idle = row.idle_days
    if not row.never_used:
        return _move(row, "archived", f"idle {idle} days; archive after {th.archive_after_days}")
    if row.lifecycle_state == "active":
        return _move(row, "stale", f"never used, idle {idle} days; marked stale before any archive")
    stale_for = days_since(rec.get("state_updated_at"), now)
    if stale_for is not None and stale_for < th.grace_days:
        return _hold(
            row, "grace", f"never used, stale for {stale_for} days ({th.grace_days}-day grace)"
        )
    return _move(
        row, "archived", f"never used, idle {idle} days; stale past the {th.grace_days}-day grace"
    )


def _cap_archives(
    moves: list[Transition], rows: Mapping[str, ReportRow], th: Thresholds
) -> tuple[list[Transition], list[Hold]]:
    archives = [t for t in moves if t.to_state == "archived"]
    if th.max_archives is None or len(archives) <= th.max_archives:
        return moves, []
    ranked = sorted(archives, key=lambda t: (-(t.idle_days or 0), t.name))
    over = {t.name for t in ranked[th.max_archives :]}
    kept = [t for t in moves if t.name not in over]
    held = []
    for name in sorted(over):
        row = rows[name]
        detail = f"archive limit of {th.max_archives} per run reached; archived in a later run"
        held.append(_hold(row, "archive_limit", detail))
        if row.lifecycle_state == "active":
            kept.append(_move(row, "stale", f"idle {row.idle_days} days; archive deferred"))
    return kept, held


def _move(row: ReportRow, to_state: str, reason: str) -> Transition:
    return Transition(
        name=row.name,
        from_state=row.lifecycle_state,
        to_state=to_state,
        reason=reason,
        idle_days=row.idle_days,
    )


def _hold(row: ReportRow, reason: HoldReason, detail: str) -> Hold:
    return Hold(name=row.name, state=row.lifecycle_state, reason=reason, detail=detail)
