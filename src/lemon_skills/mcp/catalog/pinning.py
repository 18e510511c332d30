"""Tool pinning: a server may not change a tool behind the user's back (rug-pull defence).

The first time a server lists a tool, a hash of its name, description and input schema is
recorded in ``<agent dir>/mcp-pins/<server>.json``. A later listing whose tool hashes
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


def pins_path(server: str) -> Path:
    """Where ``server``'s pins are kept."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in server)
    return paths.agent_dir() / "mcp-pins" / f"{safe}.json"


def review(server: str, tools: Iterable[types.Tool]) -> Review:
    """Check ``tools`` against ``server``'s pins; pin every new tool that looks clean."""
    path = pins_path(server)
    pinned = _read(path)
    held: dict[str, str] = {}
    fresh: dict[str, str] = {}
    for tool in tools:
        digest = tool_hash(tool)
        known = pinned.get(tool.name)
        if known == digest:
            continue
        if known is not None:
            held[tool.name] = "changed since it was pinned (name, description or schema)"
            continue
        findings = description_findings(tool.description or "")
        if findings:
            held[tool.name] = "description " + "; ".join(findings)
        else:
            fresh[tool.name] = digest
    if fresh:
        _update(path, fresh)
    return Review(held)


def approve(server: str, tools: Iterable[types.Tool]) -> list[str]:
    """Pin ``tools`` as they are now; return the names whose pin changed."""
    path = pins_path(server)
    pinned = _read(path)
    now = {t.name: tool_hash(t) for t in tools}
    changed = sorted(n for n, d in now.items() if pinned.get(n) != d)
    if changed:
        _update(path, {n: now[n] for n in changed})
    return changed


def _read(path: Path) -> dict[str, str]:
    data = _fs.read_json(path, default=dict)
    tools: Any = data.get("tools", {})
    return {str(k): str(v) for k, v in tools.items()} if isinstance(tools, dict) else {}


def _update(path: Path, pins: Mapping[str, str]) -> None:
    def change(data: dict[str, Any]) -> None:
        data.setdefault("tools", {}).update(pins)

    path.parent.mkdir(parents=True, exist_ok=True)
    _fs.update_json(path, change, default=dict, mode=_FILE_MODE)
