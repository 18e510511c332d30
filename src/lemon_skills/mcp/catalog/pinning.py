"""Tool pinning: a server may not change a tool behind the user's back (rug-pull defence).

The first time a server lists a tool, a hash of its name, description and input schema is
recorded in ``<agent dir>/mcp-pins/<server>.json``, and beside it a hash of its title and
annotations (a flip of ``destructiveHint`` to ``readOnlyHint`` would skip
``approve: destructive``); a pin file written before annotations were pinned gets that second
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
from pathlib import Path
from typing import Any

from mcp import types

from lemon_skills import _fs, paths
from lemon_skills.text.descriptions import description_findings

_FILE_MODE = 0o600


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


def pins_path(server: str) -> Path:
    """Where ``server``'s pins are kept."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in server)
    return paths.agent_dir() / "mcp-pins" / f"{safe}.json"


def review(server: str, tools: Iterable[types.Tool]) -> Review:
    """Check ``tools`` against ``server``'s pins; pin every new tool that looks clean."""
    path = pins_path(server)
    pinned, pinned_traits = _read(path)
    held: dict[str, str] = {}
    fresh: dict[str, str] = {}
    fresh_traits: dict[str, str] = {}
    for tool in tools:
        digest, traits = tool_hash(tool), traits_hash(tool)
        known = pinned.get(tool.name)
        if known == digest:
            was = pinned_traits.get(tool.name)
            if was is None:
                fresh_traits[tool.name] = traits
            elif was != traits:
                held[tool.name] = "changed since it was pinned (title or annotations)"
            continue
        if known is not None:
            held[tool.name] = "changed since it was pinned (name, description or schema)"
            continue
        findings = description_findings(tool.description or "")
        if findings:
            held[tool.name] = "description " + "; ".join(findings)
        else:
            fresh[tool.name] = digest
            fresh_traits[tool.name] = traits
    if fresh or fresh_traits:
        _update(path, fresh, fresh_traits)
    return Review(held)


def approve(server: str, tools: Iterable[types.Tool]) -> list[str]:
    """Pin ``tools`` as they are now; return the names whose pin changed."""
    path = pins_path(server)
    pinned, pinned_traits = _read(path)
    listed = list(tools)
    now = {t.name: tool_hash(t) for t in listed}
    traits = {t.name: traits_hash(t) for t in listed}
    changed = sorted(n for n in now if pinned.get(n) != now[n] or pinned_traits.get(n) != traits[n])
    if changed:
        _update(path, {n: now[n] for n in changed}, {n: traits[n] for n in changed})
    return changed


def _read(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The tool pins and the title-and-annotations pins of one server."""
    data = _fs.read_json(path, default=dict)
    return _table(data.get("tools")), _table(data.get("traits"))


def _table(pins: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in pins.items()} if isinstance(pins, dict) else {}


def _update(path: Path, pins: Mapping[str, str], traits: Mapping[str, str]) -> None:
    def change(data: dict[str, Any]) -> None:
        for table, values in (("tools", pins), ("traits", traits)):
            if not isinstance(data.get(table), dict):
                data[table] = {}
            data[table].update(values)

    path.parent.mkdir(parents=True, exist_ok=True)
    _fs.update_json(path, change, default=dict, mode=_FILE_MODE)
