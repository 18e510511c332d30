"""What a remote skill source (an MCP server offering SEP-2640 skills) contributes: metadata.

A source lists skills as ``RemoteSkill`` records (the listing's frontmatter and the digest and
size of every file); content is fetched only when a view needs it, through the source's
``fetch`` callable, and is checked against the record before use (``verify``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

#: The frontmatter ``metadata`` key under which ``lemon mcp serve`` keeps a skill's own name
#: when that name breaks the Agent Skills naming rules and the skill is served under its folder
#: name instead; a lemon consumer shows and ranks the skill by it, as on disk.
ORIGINAL_NAME_KEY = "lemon-skills/name"


class RemoteFile(NamedTuple):
    """One file of a remote skill as its listing describes it."""

    uri: str
    digest: str | None
    size: int | None


@dataclass(frozen=True, slots=True)
class RemoteSkill:
    """One skill of one server, from the listing alone (no file fetched)."""

    server: str
    uri: str
    name: str
    description: str
    frontmatter: Mapping[str, Any]
    #: Every file with its digest; None when the server publishes none (dynamic skills).
    files: tuple[RemoteFile, ...] | None
    #: The skill path (``/`` as ``.``) when it is more than the name: keys the skill instead.
    alias: str | None = None
    #: The name the skill has on its origin's disk when it was served under another
    #: (``ORIGINAL_NAME_KEY``): what the skill is shown and ranked by.
    label: str | None = None

    @property
    def key(self) -> str:
        """``<server>:<name>``: origins never share a namespace."""
        return f"{self.server}:{self.alias or self.name}"

    def file(self, uri: str) -> RemoteFile | None:
        """The listed file at ``uri`` (None: not part of this skill as listed)."""
        return next((f for f in self.files or () if f.uri == uri), None)

    def resources_digest(self) -> str:
        """One digest over every listed uri and digest: what an approval is bound to."""
        import hashlib  # not at import: the listing path never digests

        lines = sorted(f"{f.uri} {f.digest}" for f in self.files or ())
        return "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()

    def listing_digest(self) -> str:
        """One digest over the listed frontmatter (the description the model is shown among
        it): what a listing is held to once the skill was approved."""
        import hashlib
        import json

        blob = json.dumps(self.frontmatter, sort_keys=True, default=str, ensure_ascii=False)
        return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Fetch(Protocol):
    """Read one file of the server by uri, refusing to read more than ``limit`` bytes."""

    def __call__(self, uri: str, limit: int) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Listing:
    """A source's skills now, with what went wrong listing them."""

    server: str
    skills: tuple[RemoteSkill, ...]
    problems: tuple[str, ...]
    fetch: Fetch


class SkillSource(Protocol):
    """A remote origin of skills (implemented outside the skills layer, e.g. over MCP)."""

    def listings(self, cwd: Any) -> Sequence[Listing]:
        """The listings of every origin enabled for ``cwd`` (cheap when nothing changed)."""
        ...

    def generation(self, cwd: Any) -> object:
        """A value that changes when a listing changed (``list_changed``), without I/O;
        ``()`` while the source lists nothing for ``cwd`` (the registry then asks again only
        every stat interval, or when a skills.json changed or it was invalidated)."""
        ...
