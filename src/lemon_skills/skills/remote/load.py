"""Fetching a remote skill's files: each checked against the listing (size, digest,
frontmatter), run through the install audit, held to the digest its approval was pinned to, and
cached on disk by digest. Nothing that failed a check is cached or returned."""

from __future__ import annotations

from typing import Any

from lemon_skills.errors import RemoteSkillError
from lemon_skills.skills.remote import store
from lemon_skills.skills.remote.model import Fetch, RemoteFile, RemoteSkill
from lemon_skills.skills.remote.verify import (
    MAX_FILE_BYTES,
    content_problem,
    frontmatter_problem,
    pin_problem,
    size_problem,
    skill_problem,
)


def _fail(skill: RemoteSkill, reason: str, hint: str | None = None) -> RemoteSkillError:
    return RemoteSkillError(
        f"skill {skill.key!r} from MCP server {skill.server!r} was refused: {reason}", hint=hint
    )


def _fetch_verified(skill: RemoteSkill, f: RemoteFile, fetch: Fetch) -> bytes:
    if (problem := size_problem(f)) is not None:
        raise _fail(skill, problem)
    assert f.digest is not None  # skill_problem refuses a listing without digests
    data = store.cached(f.digest)
    if data is not None:
        return data
    try:
        data = fetch(f.uri, MAX_FILE_BYTES)
    except RemoteSkillError:
        raise
    except Exception as exc:  # the source's failure is this skill's diagnostic
        raise _fail(skill, f"reading {f.uri} failed: {exc}") from exc
    if (problem := content_problem(f, data)) is not None:
        raise _fail(skill, problem, hint="the server may have changed it; list again")
    return data


def _check_pin(skill: RemoteSkill) -> bool:
    """Refuse a skill its approval does not cover; pin its files at first use. True when its
    listing is pinned already (else it is pinned once every check passed, so a listing the
    file contradicts is never the one approved)."""
    pins, listed = store.approvals()
    problem = pin_problem(skill, pins, listed)
    if problem is not None:
        raise _fail(
            skill,
            problem,
            hint=f"review it, then `lemon skill enable {skill.key}` to approve this version",
        )
    if pins.get(skill.key) is None:
        store.pin(skill.key, skill.resources_digest())
    return listed.get(skill.key) is not None


def verified_text(skill: RemoteSkill, fetch: Fetch) -> str:
    """SKILL.md of ``skill`` checked against the listing (size, digest, frontmatter); not yet
    approved, so only for ranking, never for showing. Cached when the audit passes it.

    Raises:
        RemoteSkillError: a check failed; nothing was cached.
    """
    if (problem := skill_problem(skill)) is not None:
        raise _fail(skill, problem)
    main = skill.file(skill.uri)
    assert main is not None and main.digest is not None
    data = _fetch_verified(skill, main, fetch)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(skill, "SKILL.md is not UTF-8") from exc
    if (problem := frontmatter_problem(skill.frontmatter, text)) is not None:
        raise _fail(skill, problem)
    if _audit(skill, data).verdict == "pass":
        store.keep(main.digest, data)
    return text


def _audit(skill: RemoteSkill, data: bytes) -> Any:
    from lemon_skills.skills.audit.scan import audit_bundle

    return audit_bundle({"SKILL.md": data}, name=skill.name)


def load_text(skill: RemoteSkill, fetch: Fetch) -> str:
    """SKILL.md of ``skill`` for use: verified, held to its approval, audited and cached.

    Raises:
        RemoteSkillError: any check failed; nothing was cached.
    """
    if (problem := skill_problem(skill)) is not None:
        raise _fail(skill, problem)
    listing_pinned = _check_pin(skill)
    text = verified_text(skill, fetch)
    data = text.encode("utf-8")
    report = _audit(skill, data)
    if report.verdict == "block":
        reasons = "; ".join(f.message for f in report.findings if f.severity == "block")
        raise _fail(skill, f"the install audit blocks it ({reasons})")
    if report.verdict == "warn" and not store.reviewed(skill.key):
        # As an install with warnings needs a human, so does a served skill with them.
        reasons = "; ".join(f"{f.rule}: {f.message}" for f in report.findings)
        raise _fail(
            skill,
            f"the install audit needs a human to look at it ({reasons})",
            hint=f"if you trust it, `lemon skill enable {skill.key}` approves it",
        )
    main = skill.file(skill.uri)
    assert main is not None and main.digest is not None
    store.keep(main.digest, data)
    if not listing_pinned:
        store.pin(skill.key, skill.resources_digest(), listing=skill.listing_digest())
    return text


def load_file(skill: RemoteSkill, fetch: Fetch, rel: str) -> bytes:
    """A supporting file of ``skill`` by its path relative to the skill, verified and cached.

    Raises:
        RemoteSkillError: the file is not in the listing, or a check failed.
    """
    load_text(skill, fetch)  # the skill itself must pass before any of its files is used
    uri = skill.uri.removesuffix("SKILL.md") + rel
    f = skill.file(uri)
    if f is None:
        raise _fail(skill, f"{rel!r} is not one of its listed files")
    data = _fetch_verified(skill, f, fetch)
    assert f.digest is not None
    store.keep(f.digest, data)
    return data
