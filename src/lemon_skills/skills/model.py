"""Domain records of the skills core: ``Entry`` (one visible skill) and ``Diagnostic``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .manifest import Manifest

Source = Literal["project", "global"]
Level = Literal["error", "warning", "info"]


class BodyText:
    """A skill body read from disk on first use, so listing skills never reads whole files."""

    __slots__ = ("_path", "_text")

    def __init__(self, skill_dir: Path | None = None, text: str | None = None) -> None:
        self._path = skill_dir
        self._text = text

    def get(self) -> str:
        """The body text (after the frontmatter); empty when the file has gone."""
        if self._text is None:
            self._text = _read_body(self._path / "SKILL.md") if self._path is not None else ""
        return self._text


def _read_body(path: Path) -> str:
    from .manifest import split_frontmatter  # local: manifest imports nothing from here

    try:
        return split_frontmatter(path.read_text(encoding="utf-8")).body
    except (OSError, UnicodeDecodeError, ValueError):
        return ""


class ManifestRef:
    """A manifest, or how to build it on first use (entries loaded from the manifest cache)."""

    __slots__ = ("_build", "_manifest", "_listing")

    def __init__(
        self,
        manifest: Manifest | None = None,
        build: Callable[[], Manifest] | None = None,
        listing: Mapping[str, Any] | None = None,
    ) -> None:
        self._manifest = manifest
        self._build = build
        self._listing = listing

    def listing(self) -> dict[str, Any]:
        """The manifest fields a listing shows, without building the manifest if not needed."""
        if self._manifest is None and self._listing is not None:
            return dict(self._listing)
        m = self.get()
        return {
            "version": m.version,
            "tags": list(m.tags),
            "keywords": list(m.keywords),
            "category": m.category,
            "platforms": list(m.platforms),
        }

    def get(self) -> Manifest:
        """The manifest (built once)."""
        if self._manifest is None:
            self._manifest = self._build() if self._build is not None else Manifest()
            self._build = None
        return self._manifest


@dataclass(frozen=True, slots=True, init=False)
class Entry:
    """One skill as the agent sees it.

    ``key`` is the directory name and is what every API takes; ``name`` is the frontmatter
    name (defaulting to the key). ``body`` is the SKILL.md text after the frontmatter, read
    lazily for entries the registry loaded from its manifest cache.
    """

    key: str
    name: str
    description: str
    source: Source
    path: Path
    enabled: bool
    search_dir: Path | None
    real_path: str
    #: (mtime_ns, size, inode) of SKILL.md when loaded; None for entries built in memory.
    file_sig: tuple[int, int, int] | None = field(compare=False)
    body_text: BodyText = field(repr=False, compare=False)
    manifest_ref: ManifestRef = field(repr=False, compare=False)

    def __init__(
        self,
        *,
        key: str,
        name: str,
        description: str,
        source: Source,
        path: Path,
        enabled: bool = True,
        manifest: Manifest | None = None,
        body: str | None = None,
        search_dir: Path | None = None,
        real_path: str | None = None,
        file_sig: tuple[int, int, int] | None = None,
        body_text: BodyText | None = None,
        manifest_ref: ManifestRef | None = None,
    ) -> None:
        init = object.__setattr__
        init(self, "key", key)
        init(self, "name", name)
        init(self, "description", description)
        init(self, "source", source)
        init(self, "path", path)
        init(self, "enabled", enabled)
        init(self, "search_dir", search_dir)
        init(self, "real_path", real_path or os.path.realpath(path))
        init(self, "file_sig", file_sig)
        init(self, "body_text", body_text or BodyText(path if body is None else None, body))
        init(self, "manifest_ref", manifest_ref or ManifestRef(manifest))

    @property
    def manifest(self) -> Manifest:
        """The parsed frontmatter."""
        return self.manifest_ref.get()

    @property
    def body(self) -> str:
        """The instructions after the frontmatter."""
        return self.body_text.get()

    @property
    def skill_file(self) -> Path:
        """The SKILL.md of this skill."""
        return self.path / "SKILL.md"

    def content(self) -> str:
        """Read SKILL.md from disk (frontmatter included)."""
        return self.skill_file.read_text(encoding="utf-8")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no body text)."""
        return {
            "key": self.key,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path),
            "enabled": self.enabled,
            **self.manifest_ref.listing(),
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
