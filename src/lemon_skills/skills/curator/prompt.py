"""The review prompt a host agent runs after a curator pass to consolidate learned skills."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from lemon_skills.skills.usage.report import ReportRow

#: The tools a background review may use: read and manage skills, consult memory. Nothing else.
LEARNING_TOOLS: Final = ("read_skill", "skill_manage", "search_memory", "memory_topic")

REVIEW_PROMPT: Final = """\
You are running as Lemon's background skill curator.

Goal: keep a useful procedural-memory library. Prefer class-level skills with clear sections \
and supporting files over many one-session micro-skills. User corrections, workflow and \
formatting preferences, and lessons about tools are the signals worth keeping as skills.

Hard rules:
- Touch only the agent-authored skills listed below. Never touch user-authored, installed or \
other skills.
- Never delete a skill. To retire one, use skill_manage action=archive; it can be restored.
- Skip pinned and archived skills.
- Judge by content and workflow class, not by the usage counters alone.
- When several narrow skills cover one class of work, merge them into one umbrella skill, then \
archive the narrow ones.

Change preference, in this order:
1. Patch an existing class-level skill (skill_manage action=patch or edit).
2. Add or update supporting files of a skill: references/, templates/, scripts/ \
(skill_manage action=write_file).
3. Create a new umbrella skill only when no existing skill owns the lesson \
(skill_manage action=create).
4. Avoid creating new narrow skills.

Use read_skill to inspect a skill before changing it, and skill_manage \
create/patch/write_file/pin/archive/restore to change it. Pin a skill that must never be \
archived. End with a short summary: clusters found, skills patched, files added, skills \
archived, new umbrella skills, and clusters left alone and why."""


def review_prompt(scope: str, candidates: Iterable[ReportRow]) -> str:
    """The full prompt: instructions, scope and one line per candidate skill."""
    lines = [candidate_line(r) for r in candidates]
    body = (
        "\n".join(lines) if lines else f"No agent-authored {scope} skills have usage records yet."
    )
    return f"{REVIEW_PROMPT}\n\nScope: {scope}\n\nCandidates:\n{body}"


def candidate_line(row: ReportRow) -> str:
    """``- name state=.. loads=N writes=N idle_days=N|unknown last_activity=..|never``."""
    idle = "unknown" if row.idle_days is None else str(row.idle_days)
    return (
        f"- {row.name} state={row.review_markers()} loads={row.load_count} "
        f"writes={row.write_count} idle_days={idle} last_activity={row.last_activity_at or 'never'}"
    )
