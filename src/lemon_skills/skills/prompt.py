"""Render the system-prompt block: relevant skills plus the catalogue, within a char budget.

Pure: takes the ranked entries and the catalogue entries, returns text plus an account of
what was shortened, truncated or left out, so nothing is ever dropped silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lemon_skills.skills.model import Entry

if TYPE_CHECKING:
    from lemon_skills.tool import Tool

Mode = Literal["content", "metadata"]

DEFAULT_BUDGET = 16_000
#: Share of the budget relevant skills may use before the catalogue gets its part.
RELEVANT_SHARE = 0.6
SHORT_DESCRIPTION = 100
_MIN_CONTENT = 400

INTRO = (
    "Skills are folders of instructions for specialised tasks. The skills below matched the "
    "request; follow them when they apply. Load any other listed skill with the read_skill "
    "tool before relying on it."
)
#: When no skill matched, the catalogue must not read as a list of matches.
INTRO_CATALOGUE = (
    "Skills are folders of instructions for specialised tasks. None was matched to this "
    "request; if one of those listed below applies, load it with the read_skill tool before "
    "relying on it."
)

#: When every match was left out for budget (they are then named after it).
INTRO_OVER_BUDGET = "Skills are folders of instructions for specialised tasks."


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The rendered block and an account of what did not fit."""

    text: str
    relevant: tuple[str, ...]
    listed: tuple[str, ...]
    shortened: tuple[str, ...]
    truncated: tuple[str, ...]
    omitted: tuple[str, ...]
    budget: int
    #: With ``lemon_skills.prompt.render(..., tools=True)``: the tools to send this turn and the
    #: characters their definitions take of ``budget``.
    tools: tuple[Tool, ...] = ()
    tool_chars: int = 0

    @property
    def diagnostics(self) -> list[str]:
        """Human-readable notes about budget cuts (empty when everything fit)."""
        notes = []
        if self.truncated:
            notes.append("content truncated for budget: " + ", ".join(self.truncated))
        if self.shortened:
            notes.append(f"{len(self.shortened)} catalogue descriptions shortened for budget")
        if self.omitted:
            notes.append(f"{len(self.omitted)} skills left out for budget (--verbose names them)")
        return notes


def escape(text: str) -> str:
    """XML-escape text for the prompt block."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def render(
    relevant: Sequence[Entry],
    catalogue: Sequence[Entry],
    *,
    budget: int = DEFAULT_BUDGET,
    mode: Mode = "content",
    near: Sequence[str] = (),
) -> RenderedPrompt:
    """Build the prompt block; ``catalogue`` should already exclude hidden skills.

    ``near`` are catalogue keys closest to the request, best first: they are listed first,
    so a budget that cannot describe every skill describes the ones that may apply.
    """
    if not relevant and not catalogue:
        return RenderedPrompt("", (), (), (), (), (), budget)
    remaining = budget - max(len(INTRO), len(INTRO_CATALOGUE)) - 2
    rel_parts, truncated, rel_shown, rel_omitted = _relevant_block(
        relevant, int(max(remaining, 0) * RELEVANT_SHARE), mode
    )
    rel_text = _wrap("relevant_skills", rel_parts) if rel_parts else ""
    intro = INTRO if rel_parts else INTRO_CATALOGUE
    if rel_omitted:
        # The agent must not read "none matched" when matches only lacked room.
        intro = (INTRO if rel_parts else INTRO_OVER_BUDGET) + (
            " These also matched but were left out for budget; load them with read_skill: "
            + ", ".join(escape(k) for k in rel_omitted)
            + "."
        )
    remaining -= len(rel_text) + max(0, len(intro) - max(len(INTRO), len(INTRO_CATALOGUE)))
    shown_keys = {e.key for e in relevant}
    rest = [e for e in catalogue if e.key not in shown_keys]
    cat_lines, listed, shortened, omitted = _catalogue_block(rest, remaining, near)
    cat_text = _wrap("available_skills", cat_lines) if cat_lines else ""
    text = "\n\n".join(part for part in (intro, rel_text, cat_text) if part)
    return RenderedPrompt(
        text=text,
        relevant=tuple(rel_shown),
        listed=tuple(listed),
        shortened=tuple(shortened),
        truncated=tuple(truncated),
        omitted=tuple(rel_omitted + omitted),
        budget=budget,
    )


def _wrap(tag: str, lines: list[str]) -> str:
    return f"<{tag}>\n" + "\n".join(lines) + f"\n</{tag}>"


def _relevant_block(
    entries: Sequence[Entry], budget: int, mode: Mode
) -> tuple[list[str], list[str], list[str], list[str]]:
    parts: list[str] = []
    truncated: list[str] = []
    shown: list[str] = []
    omitted: list[str] = []
    left = budget - len("<relevant_skills>\n\n</relevant_skills>")
    for i, e in enumerate(entries):
        share = left // (len(entries) - i)
        head = (
            f'<skill key="{escape(e.key)}" name="{escape(e.name)}" source="{e.source}" '
            f'location="{escape(str(e.skill_file))}">\n'
            f"<description>{escape(e.description)}</description>\n"
        )
        tail = "</skill>"
        body = e.body.strip() if mode == "content" else ""
        room = share - len(head) - len(tail) - 1
        if room < 0:
            omitted.append(e.key)
            continue
        if len(body) > room:
            note = f"\n[truncated; call read_skill with key {e.key!r} for the rest]"
            if room - len(note) >= _MIN_CONTENT:
                body = body[: room - len(note)].rstrip() + note
            else:
                body = f"[content over budget; call read_skill with key {e.key!r}]"
            truncated.append(e.key)
        block = head + (f"{body}\n" if body else "") + tail
        parts.append(block)
        shown.append(e.key)
        left -= len(block) + 1
    return parts, truncated, shown, omitted


def _catalogue_line(e: Entry, description: str | None) -> str:
    desc = f"<description>{escape(description)}</description>" if description else ""
    location = f"<location>{escape(str(e.skill_file))}</location>"
    return f"<skill><name>{escape(e.key)}</name>{desc}{location}</skill>"


def _catalogue_block(
    entries: Sequence[Entry], budget: int, near: Sequence[str] = ()
) -> tuple[list[str], list[str], list[str], list[str]]:
    """The catalogue: closest to the request first (``near``), then project before global.

    Full descriptions if everything fits. Otherwise the leading skills get a line with a
    shortened description for as long as the names of all the others still fit after them on
    one compact names-only line; only when not even every name fits is the tail left out.
    """
    budget -= len("<available_skills>\n\n</available_skills>")
    rank = {k: i for i, k in enumerate(near)}
    ordered = sorted(
        entries, key=lambda e: (rank.get(e.key, len(rank)), e.source != "project", e.key)
    )
    # Lines are formatted only until the budget is spent: what a render costs follows what it
    # can show, not how many skills there are.
    full: list[str] = []
    size = 0
    for e in ordered:
        full.append(_catalogue_line(e, e.description))
        size += len(full[-1]) + 1
        if size > budget:
            break
    else:
        return full, [e.key for e in ordered], [], []
    names = [len(escape(e.key)) + 2 for e in ordered]
    rest_names = sum(names) + len(_OTHERS_OPEN) + len(_OTHERS_CLOSE) + 1
    lines: list[str] = []
    used = 0
    for i, e in enumerate(ordered):
        line = _catalogue_line(e, _shorten(e.description))
        rest_names -= names[i]
        if used + len(line) + 1 + rest_names > budget:
            break
        lines.append(line)
        used += len(line) + 1
    detailed = ordered[: len(lines)]
    room = budget - used - len(_OTHERS_OPEN) - len(_OTHERS_CLOSE) - 1
    by_name: list[Entry] = []
    for e, cost in zip(ordered[len(lines) :], names[len(lines) :], strict=True):
        if cost > room:
            break
        by_name.append(e)
        room -= cost
    if by_name:
        lines.append(_OTHERS_OPEN + ", ".join(escape(e.key) for e in by_name) + _OTHERS_CLOSE)
    listed = [e.key for e in (*detailed, *by_name)]
    shortened = [e.key for e in detailed if len(e.description) > SHORT_DESCRIPTION]
    shortened += [e.key for e in by_name]
    omitted = [e.key for e in ordered[len(listed) :]]
    return lines, listed, shortened, omitted


#: The compact line naming the skills the budget leaves no room to describe.
_OTHERS_OPEN = "<other_skills>"
_OTHERS_CLOSE = "</other_skills>"


def _shorten(text: str) -> str:
    if len(text) <= SHORT_DESCRIPTION:
        return text
    cut = text[: SHORT_DESCRIPTION - 1].rsplit(" ", 1)[0]
    return cut + "…"
