"""A remote source's last listing kept between runs, so a command need not start the server.

One file per server identity (its name and the hash of its config entry): a changed entry is a
new identity, so what its old entry listed is never used for it. A saved listing is metadata
only and grants nothing: every skill it names is still held to its pin (``verify``), and a body
is used only from the digest-keyed file store (``store``) when its digest is the listed one. A
file that does not parse, has another shape, or whose checksum does not match is ignored, as if
absent. Freshness follows the server's hints (``ttlMs``); a listing past its lifetime is still
used while a refresh runs in the background, up to ``MAX_AGE_S``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from lemon_skills import _fs
from lemon_skills.paths import agent_dir
from lemon_skills.skills.remote.model import RemoteFile

FORMAT = 1
#: How long a listing counts as fresh when its server gave no ``ttlMs``.
DEFAULT_TTL_S = 60.0
#: The longest a server's ``ttlMs`` is honoured for (the MCP SDK's own cap).
MAX_TTL_S = 24 * 3600.0
#: A saved listing older than this is not used at all: the server is asked in the foreground.
MAX_AGE_S = 24 * 3600.0
#: A refresh's claim older than this is a refresh that died.
CLAIM_STALE_S = 120.0


class SavedSkill(NamedTuple):
    """One listed skill as its server sent it (the fields ``to_remote`` reads)."""

    uri: str
    frontmatter: Mapping[str, Any]
    files: tuple[RemoteFile, ...] | None


@dataclass(frozen=True, slots=True)
class SavedListing:
    skills: tuple[SavedSkill, ...]
    problems: tuple[str, ...]
    saved_at: float
    ttl_s: float
    scope: str | None

    def fresh(self, now: float) -> bool:
        """Within the lifetime the server gave it: no refresh is due."""
        return 0 <= now - self.saved_at < self.ttl_s

    def usable(self, now: float) -> bool:
        """Young enough to answer from while a refresh runs."""
        return 0 <= now - self.saved_at < MAX_AGE_S


def cache_dir() -> Path:
    """Where saved listings live (``$LEMON_AGENT_DIR/cache/mcp-skills``)."""
    return agent_dir() / "cache" / "mcp-skills"


def key_of(server: str, identity: str) -> str:
    """The file key of ``server`` configured as the entry whose hash is ``identity``."""
    return hashlib.sha256(f"{server}\0{identity}".encode()).hexdigest()[:32]


def path_of(key: str) -> Path:
    return cache_dir() / f"{key}.json"


def _checksum(body: Mapping[str, Any]) -> str:
    blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def save(
    key: str,
    skills: Sequence[Any],
    problems: Sequence[str],
    *,
    ttl_ms: int | None,
    scope: str | None,
    now: float | None = None,
) -> None:
    """Keep the listing ``skills`` (wire entries: ``uri``, ``frontmatter``, ``files``)."""
    body = {
        "format": FORMAT,
        "key": key,
        "saved_at": time.time() if now is None else now,
        "ttl_s": DEFAULT_TTL_S if ttl_ms is None else min(ttl_ms / 1000, MAX_TTL_S),
        "scope": scope,
        "problems": list(problems),
        "skills": [
            {
                "uri": s.uri,
                "frontmatter": s.frontmatter,
                "files": None if s.files is None else [list(f) for f in s.files],
            }
            for s in skills
        ],
    }
    data = {"body": body, "sha256": _checksum(body)}
    with contextlib.suppress(OSError, TypeError, ValueError):  # an unsaved listing is refetched
        blob = json.dumps(data, ensure_ascii=False).encode("utf-8")
        _fs.write_bytes_atomic(path_of(key), blob, mode=0o600, durable=False)


def load(key: str) -> SavedListing | None:
    """The saved listing of ``key``; None when there is none or it is not intact."""
    try:
        data = json.loads(path_of(key).read_bytes())
        body = data["body"]
        if data["sha256"] != _checksum(body) or body["format"] != FORMAT or body["key"] != key:
            return None
        return SavedListing(
            tuple(_skill(s) for s in body["skills"]),
            tuple(_text(p) for p in body["problems"]),
            _number(body["saved_at"]),
            _number(body["ttl_s"]),
            body["scope"] if body["scope"] in ("public", "private") else None,
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _skill(raw: Mapping[str, Any]) -> SavedSkill:
    uri, fm, files = raw["uri"], raw["frontmatter"], raw["files"]
    if type(uri) is not str or type(fm) is not dict:
        raise ValueError("not a saved skill")
    if files is None:
        return SavedSkill(uri, fm, None)
    return SavedSkill(uri, fm, tuple(_file(f) for f in files))


def _file(raw: Sequence[Any]) -> RemoteFile:
    uri, digest, size = raw
    if type(uri) is not str or not (digest is None or type(digest) is str):
        raise ValueError("not a saved file")
    if not (size is None or (type(size) is int and size >= 0)):
        raise ValueError("not a saved file size")
    return RemoteFile(uri, digest, size)


def _text(value: object) -> str:
    if type(value) is not str:
        raise ValueError("not a text")
    return value


def _number(value: object) -> float:
    if type(value) not in (int, float):
        raise ValueError("not a number")
    return float(value)  # type: ignore[arg-type]


def claim_refresh(keys: Sequence[str]) -> bool:
    """Claim the one background refresh of these listings (False: one is under way)."""
    return _fs.claim_file(_claim_path(keys), stale_s=CLAIM_STALE_S)


def release_refresh(keys: Sequence[str]) -> None:
    with contextlib.suppress(OSError):
        _claim_path(keys).unlink()


def _claim_path(keys: Sequence[str]) -> Path:
    joined = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:32]
    return cache_dir() / f"{joined}.refreshing"
