"""Checks a fetched file must pass before its content is used (SEP-2640 integrity rules).

Pure functions: each returns the reason the content is refused, or None.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from lemon_skills import _yaml
from lemon_skills.errors import ManifestError
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.skills.remote.model import RemoteFile, RemoteSkill

#: The largest file read from a server; a bigger one is refused before it is fetched.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: The most skills used from one server; the rest of a larger listing is dropped.
MAX_SKILLS_PER_SERVER = 2_000
#: The most files one skill may list (the conformance suite's server-side bound).
MAX_FILES_PER_SKILL = 512
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def digest_of(data: bytes) -> str:
    """The SEP-2640 digest form of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def listing_problem(skill: RemoteSkill) -> str | None:
    """Why a listed skill is not listed at all (bad name or uri, no digests), or None; the
    file list is checked in full (``skill_problem``) before any file is used."""
    name = skill.name
    if not (1 <= len(name) <= 64) or not _NAME.match(name):
        return f"skill name {name!r} breaks the Agent Skills naming rules"
    if not skill.uri.endswith(f"/{name}/SKILL.md"):
        return f"uri {skill.uri!r} does not end in /{name}/SKILL.md"
    if not skill.description.strip():
        return "its frontmatter has no description"
    if skill.files is None:
        return "its listing gives no file digests, so its content cannot be verified"
    return None


def skill_problem(skill: RemoteSkill) -> str | None:
    """Why a listed skill is not used at all (bad name, uri, file list), or None."""
    if (problem := listing_problem(skill)) is not None:
        return problem
    assert skill.files is not None
    if len(skill.files) > MAX_FILES_PER_SKILL:
        return f"it lists {len(skill.files)} files (at most {MAX_FILES_PER_SKILL} are accepted)"
    root = skill.uri.removesuffix("SKILL.md")
    for f in skill.files:
        if not f.uri.startswith(root) or ".." in f.uri[len(root) :].split("/"):
            return f"file {f.uri!r} lies outside the skill"
        if f.digest is None or not _DIGEST.match(f.digest):
            return f"file {f.uri!r} has no valid sha256 digest"
    if skill.file(skill.uri) is None:
        return "its file list lacks its own SKILL.md"
    return None


def size_problem(f: RemoteFile) -> str | None:
    """Why ``f`` is refused before fetching it (too large), or None."""
    if f.size is not None and f.size > MAX_FILE_BYTES:
        return f"{f.uri} is {f.size} bytes (files over {MAX_FILE_BYTES} bytes are refused)"
    return None


def content_problem(f: RemoteFile, data: bytes) -> str | None:
    """Why fetched ``data`` is not the file the listing promised, or None."""
    if f.size is not None and len(data) != f.size:
        return f"{f.uri}: size mismatch (listed {f.size} bytes, got {len(data)})"
    if f.digest is None or digest_of(data) != f.digest:
        return f"{f.uri}: digest mismatch (the content is not what the listing promised)"
    return None


def frontmatter_problem(expected: Mapping[str, Any], text: str) -> str | None:
    """Why a fetched SKILL.md's frontmatter differs from the listing's, or None."""
    try:
        split = split_frontmatter(text)
        found = _yaml.safe_load(split.frontmatter) if split.format == "yaml" else None
    except (ManifestError, _yaml.YAMLError) as exc:
        return f"SKILL.md frontmatter does not parse: {exc}"
    if not isinstance(found, dict):
        return "SKILL.md has no YAML frontmatter"
    # The listing carries the frontmatter rendered as JSON: YAML dates arrive as strings.
    found = json.loads(json.dumps(found, default=str))
    differs = sorted(k for k in {*found, *expected} if found.get(k) != expected.get(k))
    if differs:
        return "SKILL.md frontmatter differs from the listing in: " + ", ".join(map(str, differs))
    return None


def pin_problem(
    skill: RemoteSkill, pins: Mapping[str, str], listed: Mapping[str, str]
) -> str | None:
    """Why ``skill`` as listed now is not the version the user's approval is pinned to, or
    None (also when nothing is pinned yet)."""
    was = pins.get(skill.key)
    if was is None:
        return None
    if was != skill.resources_digest():
        return "its files changed since it was approved"
    listing = listed.get(skill.key)
    if listing is not None and listing != skill.listing_digest():
        return "its listing (name, description or metadata) changed since it was approved"
    return None
