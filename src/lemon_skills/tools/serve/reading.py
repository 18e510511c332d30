"""``read_skill`` as ``lemon mcp serve`` answers it: bound to what the catalogue publishes.

A client reads only served skills (not a disabled one, not one outside the agent's profile)
and only their listed files (no ``.env``, no ``.git/config``); every file is opened without
following a symlink and must still match the size and digest it was listed with, so a file
swapped between two refreshes is refused, not read through. Paths are shown relative to the
skill, never as the absolute paths of the serving machine.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from typing import Any

from lemon_skills.skills import api
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.tools.read import (
    MAX_FILE_READ,
    extract_section,
    headings,
    manifest_lines,
    status_lines,
    truncate,
)
from lemon_skills.tools.serve.catalog import Catalog, ServedFile, ServedSkill

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class Changed(Exception):
    """A served file is no longer what the catalogue listed (edited, swapped, removed)."""


def file_bytes(f: ServedFile) -> bytes:
    """The bytes of ``f`` as listed: opened without following a symlink, checked against the
    listed size and digest."""
    if f.data is not None:
        return f.data
    try:
        fd = os.open(f.path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Changed(f"{f.uri} cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise Changed(f"{f.uri} is no longer a regular file")
        data = fh.read(f.size + 1)
    if len(data) != f.size or "sha256:" + hashlib.sha256(data).hexdigest() != f.digest:
        raise Changed(f"{f.uri} changed since it was listed; list the skills again")
    return data


def find(catalog: Catalog, key: str) -> ServedSkill | None:
    """The served skill of local key ``key``, or of that served name."""
    hit = catalog.by_name(key)
    if hit is not None:
        return hit
    named = [s for s in catalog.skills.values() if s.frontmatter.get("name") == key]
    return named[0] if len(named) == 1 else None


def read(catalog: Catalog, params: Mapping[str, Any], cwd: Any) -> tuple[str, bool]:
    """The ``read_skill`` text for ``params`` and whether it reports an error."""
    key = str(params.get("key") or "").strip()
    skill = find(catalog, key)
    if skill is None:
        served = sorted(s.entry.key for s in catalog.skills.values())
        listing = "\n".join(f"- {k}" for k in served[:30]) or "(none)"
        return f"Skill not found: {key}\n\nServed skills:\n{listing}\n", True
    view = params.get("view") or "full"
    lines = _header(skill)
    if params.get("include_status") is True:
        lines += status_lines(api.status(skill.entry.key, cwd=cwd))
    if params.get("include_manifest") is True:
        lines += manifest_lines(skill.entry)
    if view == "summary":
        files = [f for f in skill.files if f.rel != "SKILL.md"]
        if files:
            lines += ["## Files", "", *(f"- {f.rel} ({f.uri})" for f in files), ""]
        return "\n".join(lines).rstrip("\n"), False
    try:
        title, content, is_error = _content(skill, params, view)
    except Changed as exc:
        return "\n".join([*lines, "## Content", "", f"(Content refused) {exc}"]), True
    content, _ = truncate(content, params.get("max_chars"))
    return "\n".join([*lines, title, "", content]), is_error


def _header(skill: ServedSkill) -> list[str]:
    base = skill.uri.removesuffix("SKILL.md")
    return [
        f"# Skill: {skill.frontmatter.get('name', skill.entry.name)}",
        "",
        f"**Key:** {skill.entry.key}",
        f"**Description:** {skill.entry.description}",
        f"**Location:** {skill.uri}",
        f"**Base:** {base} (relative paths in this skill resolve against it; read them with "
        "view=file)",
        "",
    ]


def _content(skill: ServedSkill, params: Mapping[str, Any], view: str) -> tuple[str, str, bool]:
    if view == "file":
        return _file(skill, params.get("path"))
    main = next(f for f in skill.files if f.rel == "SKILL.md")
    text = file_bytes(main).decode("utf-8", errors="replace")
    if view != "section":
        return "## Content", text, False
    name = params.get("section")
    title = f"## Section: {name or '(none)'}"
    if not name:
        return title, "No section specified. Use the 'section' parameter.", True
    body = split_frontmatter(text).body
    found = extract_section(body, str(name))
    if found is None:
        known = ", ".join(headings(body)) or "(no headings)"
        return title, f"Section '{name}' not found in skill content. Headings: {known}", True
    heading, _, rest = found.partition("\n")
    return heading, rest.lstrip("\n"), False


def _file(skill: ServedSkill, rel: Any) -> tuple[str, str, bool]:
    title = f"## File: {rel or '(none)'}"
    listed = {f.rel: f for f in skill.files}
    hint = " Files: " + ", ".join(r for r in listed if r != "SKILL.md")
    if not rel:
        return title, "No path specified. Use the 'path' parameter." + hint, True
    wanted = str(rel).removeprefix("./")
    parts = wanted.split("/")
    if "\x00" in wanted or any(p.startswith(".") or not p for p in parts):
        return title, f"Path '{rel}' is not a file of this skill (no hidden or '..' parts).", True
    f = listed.get(wanted)
    if f is None:
        return title, f"Path '{rel}' is not a file of this skill." + hint, True
    data = file_bytes(f)
    try:
        cut = len(data) > MAX_FILE_READ
        text = data[:MAX_FILE_READ].decode("utf-8", errors="ignore" if cut else "strict")
    except UnicodeDecodeError:
        return title, f"(binary file, {len(data)} bytes; not shown)", False
    if cut:
        text += f"\n... (file is larger than {MAX_FILE_READ} bytes; the rest is not shown)"
    return title, text, False
