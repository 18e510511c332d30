"""Skills from remote sources (MCP servers, SEP-2640), listed beside local skills.

A source contributes metadata only; the content of a skill is fetched when a view needs it,
checked against the listing (size, digest, frontmatter), run through the install audit, held
to the digest its approval was pinned to, and cached on disk by digest. Which sources exist is
decided outside this layer: the context service ``Sources`` holds them, built by default from
the ``SOURCES_ROLE`` implementations the composition root provides (``context.provide``), so
the skills layer never imports the MCP client.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemon_skills.context import current, provided
from lemon_skills.skills.format.model import Diagnostic, Entry, remote_entry

if TYPE_CHECKING:
    from lemon_skills.skills.format.manifest import Manifest
from lemon_skills.skills.remote.model import (
    Fetch,
    Listing,
    RemoteFile,
    RemoteSkill,
    SkillSource,
)

__all__ = [
    "SOURCES_ROLE",
    "Listing",
    "RemoteFile",
    "RemoteSkill",
    "SkillSource",
    "Sources",
    "entries",
    "files_of",
    "generation",
    "listings",
    "read_supporting",
    "sources",
]

#: The role under which the composition root names the default sources (the MCP servers).
SOURCES_ROLE = "skills.remote.sources"


@dataclass(slots=True)
class Sources:
    """The remote skill sources of one context."""

    items: list[SkillSource] = field(default_factory=list)
    #: The entries built from the last listings, by server, uri, fetch and directory: a
    #: listing that repeats a skill reuses its entry (hundreds are listed on every refresh).
    built: dict[tuple[str, str, int, Path | None], tuple[RemoteSkill, Fetch, Entry]] = field(
        default_factory=dict
    )


def _default_sources() -> Sources:
    return Sources([make() for make in provided(SOURCES_ROLE)])


def sources() -> Sources:
    """The remote sources of the context in use (``current().put(Sources, ...)`` replaces)."""
    return current().service(Sources, _default_sources)


@dataclass(frozen=True, slots=True)
class _Text:
    skill: RemoteSkill
    fetch: Fetch

    def __call__(self) -> str:
        from lemon_skills.skills.remote.load import load_text

        return load_text(self.skill, self.fetch)

    def indexable(self) -> str:
        from lemon_skills.skills.remote.load import verified_text

        return verified_text(self.skill, self.fetch)

    def manifest(self) -> Manifest:
        from lemon_skills.skills.format.manifest import build_manifest

        return build_manifest(self.skill.frontmatter)

    def version(self) -> str | None:
        main = self.skill.file(self.skill.uri)
        return None if main is None else main.digest


#: The characters ``str.split()`` splits ASCII text on, besides the space.
_ASCII_BREAKS = ("\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "  ")


def _one_line(text: str) -> str:
    """``text`` with every run of whitespace one space, as a local manifest has it. Most
    descriptions are one clean ASCII line already; finding that is cheaper than rebuilding
    them, which matters when a listing of hundreds is converted on every refresh."""
    clean = text.isascii() and text[:1] != " " and text[-1:] != " "
    if clean and not any(c in text for c in _ASCII_BREAKS):
        return text
    return " ".join(text.split())


def _entry(skill: RemoteSkill, fetch: Fetch, cwd: Path | None) -> Entry:
    return remote_entry(
        skill.key,
        skill.name if skill.label is None else _one_line(skill.label),
        _one_line(skill.description),
        skill.uri,
        cwd,
        skill.server,
        _Text(skill, fetch),
    )


def entries(
    listings: Iterable[Listing], local_names: Mapping[str, Entry], cwd: Path | None
) -> tuple[list[Entry], list[Diagnostic], dict[str, list[Entry]]]:
    """Entries for every usable listed skill, the problems found, and the remote entries a
    local skill of the same name shadows (keyed by the local key)."""
    out: list[Entry] = []
    diags: list[Diagnostic] = []
    shadowed: dict[str, list[Entry]] = {}
    from lemon_skills.skills.remote import store
    from lemon_skills.skills.remote.verify import pin_problem

    state = sources()
    built, last = {}, state.built
    pins, listed = store.approvals() if any(x.skills for x in listings) else ({}, {})
    for listing in listings:
        where = Path(f"mcp:{listing.server}")
        diags.extend(
            Diagnostic(path=where, reason=p, code="mcp_skills", level="warning")
            for p in listing.problems
        )
        fetch = listing.fetch
        for skill in listing.skills:
            slot = (listing.server, skill.uri, id(fetch), cwd)
            hit = last.get(slot)
            if hit is not None and hit[1] is fetch and hit[0] == skill:
                entry = hit[2]  # the same listed skill passed the checks before
            elif (problem := _listing_problem(skill)) is not None:
                diags.append(
                    Diagnostic(path=where, reason=problem, code="mcp_skill", key=skill.key)
                )
                continue
            else:
                entry = _entry(skill, fetch, cwd)
            built[slot] = (skill, fetch, entry)
            if (problem := pin_problem(skill, pins, listed)) is not None:
                # The body would be refused; its new description must not reach the model
                # either (a rug pull that rewrites the listing alone).
                reason = f"{problem}; withheld until `lemon skill enable {skill.key}` approves it"
                diags.append(
                    Diagnostic(path=where, reason=reason, code="mcp_skill_changed", key=skill.key)
                )
                continue
            local = _local_namesake(skill, local_names)
            if local is not None:
                shadowed.setdefault(local.key, []).append(entry)
                diags.append(
                    Diagnostic(
                        path=where,
                        reason=f"{skill.key} is hidden by the local skill {local.key!r} "
                        "of the same name",
                        code="shadowed",
                        level="info",
                        key=skill.key,
                    )
                )
                continue
            out.append(entry)
    state.built = built
    return out, diags, shadowed


def _listing_problem(skill: RemoteSkill) -> str | None:
    """Why a listed skill is not offered: the listing checks, then its description and label
    screened as tool descriptions are (they reach the model verbatim)."""
    from lemon_skills.skills.remote.verify import listing_problem
    from lemon_skills.text.descriptions import description_findings

    if (problem := listing_problem(skill)) is not None:
        return problem
    for what, text in (("description", skill.description), ("label", skill.label or "")):
        if findings := description_findings(text):
            return f"its {what} " + "; ".join(findings)
    return None


def _local_namesake(skill: RemoteSkill, local_names: Mapping[str, Entry]) -> Entry | None:
    """The local skill a remote one would pass for: same name, or a label (the name it is
    shown by) that is a local skill's name or key, in any case."""
    for name in (skill.name, skill.label):
        if name:
            found = local_names.get(name) or local_names.get(name.lower())
            if found is not None:
                return found
    return None


def generation(cwd: Path | None) -> tuple[object, ...]:
    """What changes when any source's listing changed (no I/O)."""
    return tuple(s.generation(cwd) for s in sources().items)


def listings(cwd: Path | None) -> list[Listing]:
    """Every source's listings for ``cwd``."""
    return [listing for s in sources().items for listing in s.listings(cwd)]


def _listed(entry: Entry) -> tuple[RemoteSkill, Listing] | None:
    # An MCP entry's search_dir is the directory whose servers listed it.
    for listing in listings(entry.search_dir):
        if listing.server == entry.server:
            for skill in listing.skills:
                if skill.key == entry.key:
                    return skill, listing
    return None


def files_of(entry: Entry) -> list[str]:
    """The supporting files the listing gives for MCP skill ``entry`` (nothing is fetched)."""
    found = _listed(entry)
    if found is None:
        return []
    root = found[0].uri.removesuffix("SKILL.md")
    return [f.uri.removeprefix(root) for f in found[0].files or () if f.uri != found[0].uri]


def read_supporting(entry: Entry, rel: str) -> bytes:
    """A supporting file of the MCP skill ``entry`` (verified; see ``load_file``).

    Raises:
        RemoteSkillError: the skill or file is not listed any more, or a check failed.
    """
    from lemon_skills.errors import RemoteSkillError
    from lemon_skills.skills.remote.load import load_file

    found = _listed(entry)
    if found is not None:
        return load_file(found[0], found[1].fetch, rel)
    raise RemoteSkillError(f"skill {entry.key!r} is no longer listed by its server")
