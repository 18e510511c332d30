"""Build real usage sidecars and skills for curator tests, with an injected clock."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lemon_skills
from lemon_skills.skills.usage.store import UsageStore
from tests.helpers.skills import write_skill

NOW = datetime(2026, 5, 6, tzinfo=UTC)


def days_ago(n: float, now: datetime = NOW) -> datetime:
    """``n`` days before ``now``."""
    return now - timedelta(days=n)


@dataclass
class Clock:
    """A settable clock for code that takes ``clock=``."""

    now: datetime = NOW

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def agent_skill(
    skill_root: Path,
    usage_file: Path,
    key: str,
    *,
    created: datetime,
    loaded: datetime | None = None,
    pinned: bool = False,
) -> None:
    """A skill created by an agent at ``created`` (and loaded at ``loaded``), on disk and in
    the sidecar, recorded through the real usage store."""
    write_skill(skill_root, key)
    UsageStore(usage_file, clock=lambda: created).record_write(
        {"name": key, "action": "create", "result": "ok", "agent_id": "agent-1"}
    )
    if loaded is not None:
        UsageStore(usage_file, clock=lambda: loaded).record_load({"key": key, "result": "ok"})
    if pinned:
        UsageStore(usage_file, clock=lambda: created).set_pinned(key, True)


def user_skill(skill_root: Path, usage_file: Path, key: str, *, loaded: datetime) -> None:
    """A skill the user wrote (no agent provenance), loaded at ``loaded``."""
    write_skill(skill_root, key)
    UsageStore(usage_file, clock=lambda: loaded).record_load({"key": key, "result": "ok"})


def standard_library(skill_root: Path, usage_file: Path, now: datetime = NOW) -> None:
    """The reference scenario: ``old`` used 100 days ago, ``mid`` 40 days ago, ``keep`` pinned
    and 100 days idle, ``mine`` user-authored and 100 days idle."""
    agent_skill(
        skill_root, usage_file, "old", created=days_ago(150, now), loaded=days_ago(100, now)
    )
    agent_skill(skill_root, usage_file, "mid", created=days_ago(60, now), loaded=days_ago(40, now))
    agent_skill(
        skill_root,
        usage_file,
        "keep",
        created=days_ago(150, now),
        loaded=days_ago(100, now),
        pinned=True,
    )
    user_skill(skill_root, usage_file, "mine", loaded=days_ago(100, now))


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256), to prove nothing was removed."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def is_enabled(key: str) -> bool:
    """Whether the visible skill ``key`` is enabled (it must exist)."""
    entry = lemon_skills.get(key)
    assert entry is not None, key
    return entry.enabled
