"""The usage report over ``skills.usage.json`` records: idle days, stale and archive candidates.

Pure functions over records (``build_report``, ``format_report``) plus the doctor explainer that
says when a skill is archived, stale or pinned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from lemon_skills.errors import ConfigError
from lemon_skills.skills.usage.store import (
    DEFAULT_ARCHIVE_DAYS,
    DEFAULT_STALE_DAYS,
    Record,
    UsageStore,
    as_count,
    as_text,
    days_since,
    last_activity,
    normalise,
    parse_time,
    usage_path,
)

if TYPE_CHECKING:
    from lemon_skills.skills.catalog.registry import View
    from lemon_skills.skills.format.model import Entry


#: The lifecycle states the curator moves a skill out of (pinned and archived ones stay put).
REVIEWABLE_STATES: Final = ("active", "stale")


def is_reviewable(*, agent_authored: bool, pinned: bool, state: str) -> bool:
    """The one rule for which skills the curator reviews and the usage report flags: an
    agent-authored, unpinned skill that is active or stale."""
    return agent_authored and not pinned and state in REVIEWABLE_STATES


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportRow:
    """One skill as its usage record shows it: counts, idle days, candidate flags. The usage
    report, ``skill_manage report`` and the curator all read these rows."""

    name: str
    lifecycle_state: str
    pinned: bool
    agent_authored: bool
    load_count: int
    write_count: int
    write_error_count: int
    created_at: str | None
    last_loaded_at: str | None
    last_write_at: str | None
    last_activity_at: str | None
    idle_days: int | None
    stale_candidate: bool
    archive_candidate: bool

    def markers(self) -> list[str]:
        """``archive-candidate``, ``stale-candidate``, the state, ``pinned`` (unique, in order)."""
        out = []
        if self.archive_candidate:
            out.append("archive-candidate")
        if self.stale_candidate:
            out.append("stale-candidate")
        out.append(self.lifecycle_state)
        if self.pinned and "pinned" not in out:
            out.append("pinned")
        return out

    def review_markers(self) -> str:
        """``state[,stale-candidate][,archive-candidate]``, as the curator's review lists it."""
        out = [self.lifecycle_state]
        if self.stale_candidate:
            out.append("stale-candidate")
        if self.archive_candidate:
            out.append("archive-candidate")
        return ",".join(out)

    @property
    def reviewable(self) -> bool:
        """See :func:`is_reviewable`."""
        return is_reviewable(
            agent_authored=self.agent_authored, pinned=self.pinned, state=self.lifecycle_state
        )

    @property
    def never_used(self) -> bool:
        """True when the skill was never loaded."""
        return self.load_count == 0 and parse_time(self.last_loaded_at) is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def build_report(
    records: Mapping[str, Mapping[str, Any]],
    *,
    now: datetime,
    stale_after_days: int = DEFAULT_STALE_DAYS,
    archive_after_days: int = DEFAULT_ARCHIVE_DAYS,
) -> list[ReportRow]:
    """Pure report over records; non-positive thresholds fall back to the defaults."""
    stale = stale_after_days if stale_after_days > 0 else DEFAULT_STALE_DAYS
    archive = archive_after_days if archive_after_days > 0 else DEFAULT_ARCHIVE_DAYS
    return usage_rows(records, now=now, stale_after_days=stale, archive_after_days=archive)


def usage_rows(
    records: Mapping[str, Mapping[str, Any]],
    *,
    now: datetime,
    stale_after_days: int,
    archive_after_days: int,
) -> list[ReportRow]:
    """One row per record, sorted: archive candidates, stale candidates, then by name."""
    rows = [
        usage_row(name, normalise(rec), now, stale_after_days, archive_after_days)
        for name, rec in records.items()
    ]
    return sorted(rows, key=lambda r: (not r.archive_candidate, not r.stale_candidate, r.name))


def format_report(scope: str, rows: list[ReportRow]) -> str:
    """The report text ``skill_manage`` returns to the model."""
    if not rows:
        return f"No {scope} skill usage records found."
    lines = [f"Skill usage report for {scope} scope:"]
    for r in rows:
        idle = "unknown" if r.idle_days is None else str(r.idle_days)
        lines.append(
            f"- {r.name}: {', '.join(r.markers())}; loads={r.load_count}; writes={r.write_count}; "
            f"idle_days={idle}; last_activity={r.last_activity_at or 'never'}"
        )
    return "\n".join(lines)


def lifecycle_reasons(entry: Entry, view: View) -> list[str]:
    """Doctor explainer: say when a skill is archived, stale or pinned in its usage sidecar."""
    if entry.source == "mcp" or (entry.source == "project" and view.cwd is None):
        return []
    path = usage_path(entry.source, view.cwd)
    try:
        rec = UsageStore(path).records().get(entry.key)
    except ConfigError as exc:
        return [f"usage sidecar unreadable, lifecycle state unknown: {exc.reason} ({path})"]
    if rec is None:
        return []
    state = rec["lifecycle_state"]
    out = []
    if state == "archived":
        since = f" since {rec['archived_at']}" if rec.get("archived_at") else ""
        out.append(
            f"archived{since} (recorded in {path}); restore it with skill_manage action=restore"
        )
        if entry.enabled:
            out.append("archived but enabled again in skills.json; restore marks it active")
    elif state == "stale":
        last = rec.get("last_loaded_at") or rec.get("last_write_at") or rec.get("created_at")
        out.append(
            f"marked stale (last activity {last or 'unknown'}); the curator archives stale "
            f"skills after {DEFAULT_ARCHIVE_DAYS} idle days unless they are used again"
        )
    if rec["pinned"]:
        out.append("pinned: protected from delete and archive (skill_manage action=unpin)")
    return out


def usage_row(name: str, rec: Record, now: datetime, stale: int, archive: int) -> ReportRow:
    """The row of one normalised record; candidates are reviewable skills idle long enough."""
    activity = last_activity(rec, keep_unparsable=True)
    idle = days_since(activity, now)
    authored = rec.get("created_by") == "agent"
    reviewable = is_reviewable(
        agent_authored=authored, pinned=rec["pinned"], state=rec["lifecycle_state"]
    )
    eligible = reviewable and idle is not None
    return ReportRow(
        name=name,
        lifecycle_state=rec["lifecycle_state"],
        pinned=rec["pinned"],
        agent_authored=authored,
        load_count=as_count(rec.get("load_count")),
        write_count=as_count(rec.get("write_count")),
        write_error_count=as_count(rec.get("write_error_count")),
        created_at=as_text(rec.get("created_at")),
        last_loaded_at=as_text(rec.get("last_loaded_at")),
        last_write_at=as_text(rec.get("last_write_at")),
        last_activity_at=activity,
        idle_days=idle,
        stale_candidate=eligible and idle is not None and idle >= stale,
        archive_candidate=eligible and idle is not None and idle >= archive,
    )


def store_report(
    store: UsageStore,
    *,
    stale_after_days: int = DEFAULT_STALE_DAYS,
    archive_after_days: int = DEFAULT_ARCHIVE_DAYS,
) -> list[ReportRow]:
    """``build_report`` over a store's records, at the store's clock."""
    return build_report(
        store.records(),
        now=store.now(),
        stale_after_days=stale_after_days,
        archive_after_days=archive_after_days,
    )
