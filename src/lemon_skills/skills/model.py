"""Domain records of the skills core: ``Entry`` (one visible skill) and ``Diagnostic``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .manifest import Manifest

Source = Literal["project", "global"]
Level = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One skill as the agent sees it.

    ``key`` is the directory name and is what every API takes; ``name`` is the frontmatter
    name (defaulting to the key). ``body`` is the SKILL.md text after the frontmatter.
    """

    key: str
    name: str
    description: str
    source: Source
    path: Path
    enabled: bool = True
    manifest: Manifest = field(default_factory=Manifest)
    body: str = field(default="", repr=False, compare=False)
    search_dir: Path | None = None
    content_hash: str = ""

    @property
    def skill_file(self) -> Path:
        """The SKILL.md of this skill."""
        return self.path / "SKILL.md"

    def content(self) -> str:
        """Read SKILL.md from disk (frontmatter included)."""
        return self.skill_file.read_text(encoding="utf-8")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no body text)."""
        m = self.manifest
        return {
            "key": self.key,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path),
            "enabled": self.enabled,
            "version": m.version,
            "tags": list(m.tags),
            "keywords": list(m.keywords),
            "category": m.category,
            "platforms": list(m.platforms),
            "content_hash": self.content_hash,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """A problem found while loading skills: bad file, shadowed key, corrupt state."""

    path: Path
    reason: str
    code: str
    level: Level = "error"
    key: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "path": str(self.path),
            "reason": self.reason,
            "code": self.code,
            "level": self.level,
            "key": self.key,
            "line": self.line,
        }

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{self.level}: {where}: {self.reason}"
