"""The records and protocol every skill source shares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

from lemon_skills._proc import ProgressFn
from lemon_skills.errors import SourceError

Kind = Literal["local", "git", "github"]
Trust = Literal["trusted", "community"]
#: Which lock field ``Source.latest`` is compared with to decide whether an update is needed.
VersionField = Literal["commit", "bundle_hash"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceSpec:
    """A parsed source: what to fetch, at which ref, and which subdirectory holds the skill(s)."""

    raw: str
    kind: Kind
    location: str
    ref: str | None = None
    subdir: str = ""

    @property
    def default_name(self) -> str:
        """The name a skill at the source's root gets when its SKILL.md names none."""
        tail = PurePosixPath(self.subdir).name if self.subdir else _last_segment(self.location)
        while tail.endswith(".git"):
            tail = tail[: -len(".git")]
        return tail

    def with_subdir(self, subdir: str) -> SourceSpec:
        """The same source narrowed to ``subdir`` (relative to the source root)."""
        return SourceSpec(
            raw=self.raw, kind=self.kind, location=self.location, ref=self.ref, subdir=subdir
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Fetched:
    """A source fetched to disk: ``root`` is the subdirectory asked for, ``commit`` git's HEAD."""

    root: Path
    commit: str | None = None


class Source(Protocol):
    """Fetches one kind of source."""

    trust: Trust
    version_field: VersionField

    def fetch(self, spec: SourceSpec, dest: Path, *, progress: ProgressFn | None) -> Fetched:
        """Put the source's files under ``dest`` (which does not exist yet).

        Raises:
            SourceError: the source cannot be reached or read.
        """
        ...

    def latest(self, spec: SourceSpec) -> str | None:
        """The upstream version compared with the lock's ``version_field`` by ``update``.

        None means the source is pinned (a commit id) and cannot move.

        Raises:
            SourceError: the source cannot be reached.
        """
        ...


def check_subdir(subdir: str) -> str:
    """Normalise a subdirectory inside a source; refuse absolute paths and ``..``.

    Raises:
        SourceError: the subdirectory would leave the source.
    """
    parts = [p for p in subdir.replace("\\", "/").split("/") if p not in ("", ".")]
    if subdir.startswith(("/", "\\")) or ".." in parts:
        raise SourceError(f"subdirectory {subdir!r} must be a relative path inside the source")
    return "/".join(parts)


_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")


def check_ref(ref: str | None) -> None:
    """Refuse refs git could read as options or that are not plain branch/tag/commit names.

    Raises:
        SourceError: the ref is unsafe.
    """
    if ref is not None and (not _REF.match(ref) or ".." in ref or ref.endswith((".lock", "/"))):
        raise SourceError(f"invalid git ref {ref!r}; expected a branch, tag or commit id")


def _last_segment(location: str) -> str:
    return re.split(r"[/:]", location.rstrip("/"))[-1]
