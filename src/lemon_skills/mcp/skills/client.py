"""``skills/list`` and ``resources/read`` for SEP-2640 skills, over any ``ClientSession``.

A server that declares ``io.modelcontextprotocol/skills`` is listed with ``skills/list``; one
that does not, with the older convention: every ``skill://<path>/SKILL.md`` resource is a skill
(such a listing carries no digests). Listing reads no file.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import mcp.types as types
from pydantic import TypeAdapter

EXTENSION = "io.modelcontextprotocol/skills"
#: Pages of ``skills/list`` followed at most (a cursor loop is cut short).
MAX_PAGES = 100
#: Malformed entries reported by name; the listing says only that there were more.
MAX_PROBLEMS = 20
_RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


class WireFile(NamedTuple):
    uri: str
    digest: str | None
    size: int | None


class CacheHint(NamedTuple):
    """The freshness hints of a 2026-07-28 list result (``ttlMs``, ``cacheScope``); None
    where the server gave none or an invalid one."""

    ttl_ms: int | None
    scope: str | None

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> CacheHint:
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        return cls(
            ttl if type(ttl) is int and ttl >= 0 else None,
            scope if scope in ("public", "private") else None,
        )


NO_HINT = CacheHint(None, None)


class WireSkill(NamedTuple):
    """One listed skill as the server sent it (checked by the skills layer before use)."""

    uri: str
    frontmatter: Mapping[str, Any]
    files: tuple[WireFile, ...] | None


def _files(res: list[Any]) -> tuple[WireFile, ...] | None:
    """The resources items as files; None when one lacks a uri. (A listing is parsed on
    every refresh, hundreds of entries at a time: exact type tests, no copies.)"""
    out = []
    for r in res:
        uri = r.get("uri") if type(r) is dict else None
        if type(uri) is not str:
            return None
        digest, size = r.get("digest"), r.get("size")
        out.append(
            WireFile(
                uri,
                digest if type(digest) is str else None,
                size if type(size) is int and size >= 0 else None,
            )
        )
    return tuple(out)


def parse_entries(raw: Sequence[object]) -> tuple[list[WireSkill], list[str]]:
    """The well-formed entries of a ``skills/list`` page and why the others were dropped."""
    skills: list[WireSkill] = []
    problems: list[str] = []
    for i, item in enumerate(raw):
        if type(item) is not dict and not isinstance(item, Mapping):
            problems.append(f"skills[{i}] is not an object")
            continue
        uri, fm, res = item.get("uri"), item.get("frontmatter"), item.get("resources")
        if type(uri) is not str or not isinstance(fm, Mapping):
            problems.append(f"skills[{i}] lacks a uri or a frontmatter object")
            continue
        files: tuple[WireFile, ...] | None = None
        if type(res) is list:
            files = _files(res)
            if files is None:
                problems.append(f"{uri}: a resources item lacks a uri")
                continue
        # The page was parsed for this call alone: its frontmatter objects are ours to keep.
        skills.append(WireSkill(uri, fm if type(fm) is dict else dict(fm), files))
    return skills, problems


def declares_extension(session: Any) -> bool:
    """The server declares the extension: in ``extensions`` (2026 protocol) or, on a 2025
    session whose capabilities have no such field, in ``experimental``."""
    caps = session.server_capabilities
    if caps is None:
        return False
    return any(
        isinstance(found, Mapping) and EXTENSION in found
        for found in (getattr(caps, "extensions", None), getattr(caps, "experimental", None))
    )


async def list_skills(session: Any, *, limit: int) -> tuple[list[WireSkill], list[str]]:
    """Every skill the server lists (at most ``limit``) and the problems met listing them."""
    skills, problems, _ = await list_skills_hinted(session, limit=limit)
    return skills, problems


async def list_skills_hinted(
    session: Any, *, limit: int
) -> tuple[list[WireSkill], list[str], CacheHint]:
    """``list_skills`` and the cache hints of the listing's first page."""
    if not declares_extension(session):
        return (*await _by_resources(session, limit), NO_HINT)
    skills: list[WireSkill] = []
    problems: list[str] = []
    cursor: str | None = None
    hint: CacheHint | None = None
    seen = 0  # entries read, malformed ones included: they cost as much to parse and keep
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor)
        page = await session.send_request(types.Request(method="skills/list", params=params), _RAW)
        hint = CacheHint.of(page) if hint is None else hint
        entries = page.get("skills")
        entries = entries if isinstance(entries, list) else []
        room = limit + 1 - seen  # one past the limit tells that it was passed
        found, bad = parse_entries(entries[:room])
        seen += min(len(entries), room)
        skills.extend(found)
        problems.extend(bad[: max(0, MAX_PROBLEMS - len(problems))])
        if seen > limit:
            problems.append(
                f"the server lists more than {limit} skills; only the first {limit} are used"
            )
            return skills[:limit], problems, hint
        nxt = page.get("nextCursor")
        if not isinstance(nxt, str) or not nxt or nxt == cursor:
            return skills, problems, hint
        cursor = nxt
    problems.append(f"skills/list still had pages after {MAX_PAGES}; the rest were not read")
    return skills, problems, hint or NO_HINT


async def _by_resources(session: Any, limit: int) -> tuple[list[WireSkill], list[str]]:
    caps = session.server_capabilities
    if caps is None or caps.resources is None:
        return [], []
    skills: list[WireSkill] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await session.list_resources(params=types.PaginatedRequestParams(cursor=cursor))
        for r in page.resources:
            uri = str(r.uri)
            if uri.startswith("skill://") and uri.endswith("/SKILL.md"):
                name = uri.removesuffix("/SKILL.md").rpartition("/")[2]
                fm = {"name": name, "description": r.description or ""}
                skills.append(WireSkill(uri, fm, None))
        if len(skills) > limit:
            return skills[:limit], [f"only the first {limit} skill resources are used"]
        cursor = page.next_cursor
        if not cursor:
            break
    return skills, []


async def read_bytes(session: Any, uri: str, limit: int) -> bytes:
    """The content of resource ``uri`` as bytes.

    Raises:
        ValueError: the result has no content, or more than ``limit`` bytes.
    """
    result = await session.read_resource(uri)
    for item in result.contents:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            if len(text) > limit:  # a str is never shorter than its UTF-8 bytes, in chars
                raise ValueError(f"{uri} is larger than {limit} bytes")
            data = text.encode("utf-8")
        else:
            blob = getattr(item, "blob", None)
            if not isinstance(blob, str):
                continue
            if len(blob) > (limit * 4) // 3 + 4:
                raise ValueError(f"{uri} is larger than {limit} bytes")
            data = base64.b64decode(blob)
        if len(data) > limit:
            raise ValueError(f"{uri} is larger than {limit} bytes")
        return data
    raise ValueError(f"{uri}: the server returned no content")
