"""Tool pinning: a server may not change a tool behind the user's back (rug-pull defence).

The first time a server lists a tool, a hash of its name, description and input schema is
recorded in ``<agent dir>/mcp-pins/<server>.json`` (or the shared state database, see
``lemon_skills.state.pins``, where every machine holds the same pins), and beside it a hash of
its title and annotations (a flip of ``destructiveHint`` to ``readOnlyHint`` would skip
``approve: destructive``); a pin written before annotations were pinned gets that second
hash at the next listing. A later listing whose tool hashes
differently (or a new tool whose description hides instructions, see
``lemon_skills.text.descriptions``) is held for review: withheld from the model under the
default ``pinning: withhold``, only reported under ``warn``, not checked under ``off``.
``approve`` records the tools as they are now, which lifts the hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mcp import types

from lemon_skills.state.embedded import pins_path
from lemon_skills.state.pins import pin_store
from lemon_skills.text.descriptions import description_findings

_CHANGED = "changed since it was pinned (name, description or schema)"

__all__ = [
    "Review",
    "approve",
    "generation",
    "pins_path",
    "review",
    "tool_hash",
    "traits_hash",
]


@dataclass(frozen=True, slots=True)
class Review:
    """What pinning found in one listing: every tool held for review, with the reason."""

    held: Mapping[str, str] = field(default_factory=dict)

    def to_list(self) -> list[dict[str, str]]:
        """``[{"tool", "reason"}]`` for status."""
        return [{"tool": t, "reason": r} for t, r in sorted(self.held.items())]


def tool_hash(tool: types.Tool) -> str:
    """The pin of one tool: its name, description and input schema."""
    blob = json.dumps(
        [tool.name, tool.description or "", tool.input_schema],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def traits_hash(tool: types.Tool) -> str:
    """The pin of what a tool says about itself besides its schema: title and annotations."""
    notes = (
        tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None
    )
    blob = json.dumps([tool.title, notes], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def review(server: str, tools: Iterable[types.Tool]) -> Review:
    """Check ``tools`` against ``server``'s pins; pin every new tool that looks clean."""
    store = pin_store()
    pinned, pinned_traits = store.read(server)
    elsewhere = store.held(server)
    held: dict[str, str] = {}
    fresh: dict[str, str] = {}
    fresh_traits: dict[str, str] = {}
    changed: list[str] = []
    for tool in tools:
        digest, traits = tool_hash(tool), traits_hash(tool)
        known = pinned.get(tool.name)
        if known == digest:
            was = pinned_traits.get(tool.name)
            if tool.name in elsewhere:
                held[tool.name] = "seen changed since it was pinned (on another machine)"
            elif was is None:
                fresh_traits[tool.name] = traits
            elif was != traits:
                held[tool.name] = "changed since it was pinned (title or annotations)"
                changed.append(tool.name)
            continue
        if known is not None:
            held[tool.name] = _CHANGED
            changed.append(tool.name)
            continue
        findings = description_findings(tool.description or "")
        if findings:
            held[tool.name] = "description " + "; ".join(findings)
        else:
            fresh[tool.name] = digest
            fresh_traits[tool.name] = traits
    for name in store.add(server, fresh, fresh_traits) if fresh or fresh_traits else ():
        held[name] = _CHANGED
    if changed:
        store.hold(server, changed)
    return Review(held)


def approve(server: str, tools: Iterable[types.Tool]) -> list[str]:
    """Pin ``tools`` as they are now (lifting every hold); return the names whose pin changed."""
    store = pin_store()
    pinned, pinned_traits = store.read(server)
    elsewhere = store.held(server)
    listed = list(tools)
    now = {t.name: tool_hash(t) for t in listed}
    traits = {t.name: traits_hash(t) for t in listed}
    changed = sorted(
        n
        for n in now
        if pinned.get(n) != now[n] or pinned_traits.get(n) != traits[n] or n in elsewhere
    )
    if changed:
        store.replace(server, {n: now[n] for n in changed}, {n: traits[n] for n in changed})
    return changed


def generation(server: str) -> int | None:
    """Changes whenever ``server``'s pins change on the shared database (None: files, whose
    pins only this machine changes, through :func:`approve`)."""
    return pin_store().generation(server)
