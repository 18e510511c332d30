"""Render the system-prompt block: relevant skills plus the catalogue, within a char budget.

Pure: takes the ranked entries and the catalogue entries, returns text plus an account of
what was shortened, truncated or left out, so nothing is ever dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from lemon_skills.errors import LemonSkillsError
from lemon_skills.skills.format.model import Entry

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
    catalogue: Sequence[Entry] | Catalogue,
    *,
    budget: int = DEFAULT_BUDGET,
    mode: Mode = "content",
    near: Sequence[str] = (),
) -> RenderedPrompt:
    """Build the prompt block; ``catalogue`` should already exclude hidden skills (a
    ``Catalogue`` built once serves every render over the same skills).

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
    cat = catalogue if isinstance(catalogue, Catalogue) else Catalogue.of(catalogue)
    rest = cat.without(e.key for e in relevant)
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
            f'location="{escape(e.location)}">\n'
            f"<description>{escape(e.description)}</description>\n"
        )
        tail = "</skill>"
        body = _shown_body(e) if mode == "content" else ""
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
    location = f"<location>{escape(e.location)}</location>"
    return f"<skill><name>{escape(e.key)}</name>{desc}{location}</skill>"


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Catalogue entries in listing order (project before global, then by key) with what a
    render needs of all of them worked out once: a host keeps one per set of skills, and each
    render then reads only the entries it can show."""

    entries: tuple[Entry, ...]
    keys: tuple[str, ...]
    position: Mapping[str, int]
    #: What each key costs on the names-only line, and the sum over the entries not hidden.
    name_cost: tuple[int, ...]
    names_total: int
    #: Keys left out of this catalogue (a render's relevant skills, files not in play...).
    hidden: frozenset[str] = frozenset()

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Catalogue:
        """The catalogue of ``entries`` (any order; keys unique)."""
        ordered = tuple(sorted(entries, key=lambda e: (e.source != "project", e.key)))
        keys = tuple(e.key for e in ordered)
        cost = tuple(len(escape(k)) + 2 for k in keys)
        return cls(ordered, keys, {k: i for i, k in enumerate(keys)}, cost, sum(cost))

    def without(self, keys: Iterable[str]) -> Catalogue:
        """This catalogue with ``keys`` hidden too (keys it lacks are ignored)."""
        more = {k for k in keys if k in self.position and k not in self.hidden}
        if not more:
            return self
        names_total = self.names_total - sum(self.name_cost[self.position[k]] for k in more)
        return replace(self, hidden=self.hidden | more, names_total=names_total)

    def __len__(self) -> int:
        return len(self.entries) - len(self.hidden)

    def lead(self, near: Sequence[str]) -> list[str]:
        """The keys of ``near`` this catalogue shows, best first: they open the listing."""
        rank = {k: i for i, k in enumerate(near)}
        shown = (k for k in rank if k in self.position and k not in self.hidden)
        return sorted(shown, key=rank.__getitem__)

    def walk(self, lead: Sequence[str], cursor: int = 0) -> Iterator[tuple[int, Entry]]:
        """(cursor, entry) in render order from ``cursor`` on: ``lead`` first, then the rest
        in listing order. A cursor below ``len(lead)`` indexes ``lead``, one above it the
        listing, so a walk resumes where another stopped without re-reading the skipped."""
        for i in range(cursor, len(lead)):
            yield i, self.entries[self.position[lead[i]]]
        skip = self.hidden.union(lead)
        for j in range(max(0, cursor - len(lead)), len(self.entries)):
            e = self.entries[j]
            if e.key not in skip:
                yield len(lead) + j, e

    def end(self, lead: Sequence[str]) -> int:
        """The cursor after the last entry."""
        return len(lead) + len(self.entries)

    def tail(self, lead: Sequence[str], cursor: int) -> list[str]:
        """The keys ``walk(lead, cursor)`` yields, sliced rather than walked."""
        out = list(lead[cursor:])
        start = max(0, cursor - len(lead))
        skip = self.hidden.union(lead)
        for cut in sorted(i for k in skip if (i := self.position.get(k, -1)) >= start):
            out += self.keys[start:cut]
            start = cut + 1
        out += self.keys[start:]
        return out


def _catalogue_block(
    cat: Catalogue, budget: int, near: Sequence[str] = ()
) -> tuple[list[str], list[str], list[str], list[str]]:
    """The catalogue: closest to the request first (``near``), then project before global.

    Full descriptions if everything fits. Otherwise the leading skills get a line with a
    shortened description for as long as the names of all the others still fit after them on
    one compact names-only line; only when not even every name fits is the tail left out.
    Only the entries that can be shown are formatted: a render costs what it emits, not what
    the catalogue holds.
    """
    budget -= len("<available_skills>\n\n</available_skills>")
    lead = cat.lead(near)
    full: list[str] = []
    shown: list[str] = []
    size = 0
    for _, e in cat.walk(lead):
        full.append(_catalogue_line(e, e.description))
        shown.append(e.key)
        size += len(full[-1]) + 1
        if size > budget:
            break
    else:
        return full, shown, [], []
    rest_names = cat.names_total + len(_OTHERS_OPEN) + len(_OTHERS_CLOSE) + 1
    lines: list[str] = []
    detailed: list[Entry] = []
    used = 0
    stop = cat.end(lead)
    for cursor, e in cat.walk(lead):
        line = _catalogue_line(e, _shorten(e.description))
        rest_names -= cat.name_cost[cat.position[e.key]]
        if used + len(line) + 1 + rest_names > budget:
            stop = cursor
            break
        lines.append(line)
        detailed.append(e)
        used += len(line) + 1
    room = budget - used - len(_OTHERS_OPEN) - len(_OTHERS_CLOSE) - 1
    by_name: list[str] = []
    for cursor, e in cat.walk(lead, stop):
        cost = cat.name_cost[cat.position[e.key]]
        if cost > room:
            stop = cursor
            break
        by_name.append(e.key)
        room -= cost
    else:
        stop = cat.end(lead)
    if by_name:
        lines.append(_OTHERS_OPEN + ", ".join(escape(k) for k in by_name) + _OTHERS_CLOSE)
    listed = [e.key for e in detailed] + by_name
    shortened = [e.key for e in detailed if len(e.description) > SHORT_DESCRIPTION]
    shortened += by_name
    return lines, listed, shortened, cat.tail(lead, stop)


#: The compact line naming the skills the budget leaves no room to describe.
_OTHERS_OPEN = "<other_skills>"
_OTHERS_CLOSE = "</other_skills>"


def _shorten(text: str) -> str:
    if len(text) <= SHORT_DESCRIPTION:
        return text
    cut = text[: SHORT_DESCRIPTION - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _shown_body(e: Entry) -> str:
    """The instructions injected for ``e``. A skill from an MCP server is shown only as
    ``read_skill`` would show it (verified, held to its pin, audited); its ``body`` is the
    ranking-only text, which is never shown. A refused one is named and left to read_skill,
    which says why."""
    if e.source != "mcp":
        return e.body.strip()
    from lemon_skills.skills.format.frontmatter import split_frontmatter

    try:
        return split_frontmatter(e.content()).body.strip()
    except LemonSkillsError:
        return f"[not shown: it did not pass its checks; read_skill with key {e.key!r} says why]"
