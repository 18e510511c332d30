"""Verified remote skill files on disk, by digest, and the digest each approval is pinned to.

The cache lives under the agent dir, outside every skill search path, so cached bytes never
become local skills. Only content that passed every check is written, atomically.
"""

from __future__ import annotations

from pathlib import Path

from lemon_skills import _fs
from lemon_skills.paths import agent_dir
from lemon_skills.skills.remote.verify import digest_of


def cache_dir() -> Path:
    """Where verified files are kept (resolved at call time: tests move HOME)."""
    return agent_dir() / "mcp-skills"


def _blob(digest: str) -> Path:
    return cache_dir() / "blobs" / digest.removeprefix("sha256:")


def cached(digest: str) -> bytes | None:
    """The cached file of ``digest`` if present and intact (a damaged blob is ignored)."""
    try:
        data = _blob(digest).read_bytes()
    except OSError:
        return None
    return data if digest_of(data) == digest else None


def keep(digest: str, data: bytes) -> None:
    """Store verified ``data`` under its digest."""
    path = _blob(digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    _fs.write_bytes_atomic(path, data)


def _pins_path() -> Path:
    return cache_dir() / "pins.json"


def pinned(key: str) -> str | None:
    """The resources digest ``key`` was approved with, if any."""
    pins = _fs.read_json(_pins_path(), default=dict).get("pins", {})
    value = pins.get(key) if isinstance(pins, dict) else None
    return value if isinstance(value, str) else None


def approvals() -> tuple[dict[str, str], dict[str, str]]:
    """Every pin at once: resources digest by key, and listing digest by key (what the
    frontmatter the server listed was when the skill was approved)."""
    state = _fs.read_json(_pins_path(), default=dict)
    return _strings(state.get("pins")), _strings(state.get("listed"))


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


def reviewed(key: str) -> bool:
    """Whether the user approved ``key`` by name (so audit warnings do not hold it back)."""
    names = _fs.read_json(_pins_path(), default=dict).get("reviewed", [])
    return isinstance(names, list) and key in names


def pin(key: str, digest: str | None, *, review: bool = False, listing: str | None = None) -> None:
    """Bind the approval of ``key`` to ``digest`` and, when given, the ``listing`` digest of
    its listed frontmatter (``digest`` None: forget both, so the next load re-pins);
    ``review`` records that the user approved it by name."""

    def change(state: dict[str, object]) -> None:
        for field, value in (("pins", digest), ("listed", listing)):
            table = state.get(field)
            if not isinstance(table, dict):
                table = state[field] = {}
            if digest is None:
                table.pop(key, None)
            elif value is not None:
                table[key] = value
        if review:
            names = state.get("reviewed")
            names = names if isinstance(names, list) else []
            state["reviewed"] = sorted({*names, key})

    _fs.update_json(_pins_path(), change, default=dict)
