"""A persistent cache of parsed SKILL.md frontmatter, one file per search directory.

A cold start then only stats each SKILL.md and skips YAML parsing for unchanged files; bodies
are read lazily. Records are keyed by the file's (mtime_ns, size, inode) signature, so any edit
invalidates its record. This is a cache, not state: a missing, stale, foreign or corrupt cache
file is ignored and rewritten, and nothing is lost. ``LEMON_SKILLS_CACHE=0`` turns it off.

The file is JSON, not pickle or marshal: it is parsed at C speed, and a damaged or hand-edited
file can only ever be rejected, never run code or crash the reader. Each record is validated
before it is used, so a well-formed file of the wrong shape is just as harmless.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import _fs
from ..paths import agent_dir
from . import compact
from .discovery import Candidate, Loaded
from .model import Diagnostic, cached_entry

#: Bump whenever parsing, normalisation or the record layout changes.
PARSER_VERSION = 3
FORMAT_VERSION = 5

Record = list[Any]


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """False when ``LEMON_SKILLS_CACHE`` is set to 0/false/no/off."""
    value = (os.environ if env is None else env).get("LEMON_SKILLS_CACHE", "1")
    return value.strip().lower() not in ("0", "false", "no", "off")


def cache_path(search_dir: Path) -> Path:
    """Where the cache of one search dir lives (under the agent dir, never in the skills)."""
    # Two checksums rather than a cryptographic hash, which costs more to import than a
    # cold start spends here. Each file records its dir, so a collision only costs a rebuild.
    raw = str(search_dir).encode("utf-8", "surrogateescape")
    return agent_dir() / "cache" / "skills" / f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.json"


def load(search_dir: Path) -> dict[str, Record]:
    """The records of ``search_dir`` keyed by skill dir name; empty when unusable."""
    path = cache_path(search_dir)
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):  # missing, unreadable, truncated or not JSON
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != FORMAT_VERSION
        or data.get("parser") != PARSER_VERSION
        or data.get("dir") != str(search_dir)
        or not isinstance(data.get("skills"), list)
    ):
        return {}
    try:
        return {r[0]: r for r in data["skills"] if isinstance(r, list) and isinstance(r[0], str)}
    except IndexError:
        return {}


def save(search_dir: Path, records: Sequence[Record]) -> None:
    """Write the cache of one search dir; failures are logged and ignored."""
    data = {
        "version": FORMAT_VERSION,
        "parser": PARSER_VERSION,
        "dir": str(search_dir),
        "skills": list(records),
    }
    try:
        # ASCII with \u escapes: pure-ASCII JSON is read back a third faster than UTF-8.
        _fs.write_text_atomic(cache_path(search_dir), json.dumps(data, check_circular=False))
    except OSError as exc:
        import logging  # only on this rare path: logging costs start-up time

        logging.getLogger(__name__).debug("cannot write skills cache %s: %s", search_dir, exc)


# Record layout, one JSON array per SKILL.md:
#   [key, mtime_ns, size, inode, diagnostics]                                  failed to load
#   [key, mtime_ns, size, inode, diagnostics, name, description, fields]       loaded
# diagnostics is a list of [reason, code, level]; name is null when it is the key; fields is
# ``compact.compact`` of the manifest, an empty object for almost every skill. Flat arrays and
# no repeated text keep parsing 10,000 records cheap.
_LEVELS = ("error", "warning", "info")


def encode(loaded: Loaded, cand: Candidate) -> Record:
    """A JSON-safe record of one load outcome."""
    mtime, size, ino = cand.sig
    record: Record = [
        cand.key,
        mtime,
        size,
        ino,
        [[d.reason, d.code, d.level] for d in loaded.diagnostics],
    ]
    e = loaded.entry
    if e is not None:
        record += [None if e.name == e.key else e.name, e.description, e.compact_manifest()]
    return record


def is_current(record: Record | None, cand: Candidate) -> bool:
    """True when ``record`` was made from the file as it is now."""
    if record is None:
        return False
    try:
        return (record[1], record[2], record[3]) == cand.sig
    except (IndexError, TypeError):
        return False


def decode(record: Record, cand: Candidate) -> Loaded | None:
    """Rebuild a load outcome for ``cand`` from its record, or None when it does not apply."""
    # Runs once per skill on every cold start: plain indexing, every check inline.
    try:
        sig = cand.sig
        if record[1] != sig[0] or record[2] != sig[1] or record[3] != sig[2]:
            return None
        raw_diags = record[4]
        diags = () if raw_diags == [] else _diagnostics(raw_diags, cand)
        if diags is None:
            return None
        if len(record) == 5:
            return Loaded(None, diags, sig)
        _, _, _, _, _, name, description, fields = record
    except (IndexError, TypeError, ValueError):
        return None
    if name is None:
        name = cand.key
    if (
        type(name) is not str
        or type(description) is not str
        or not (fields == {} or compact.is_valid(fields))
    ):
        return None
    entry = cached_entry(
        cand.key,
        name,
        description,
        cand.source,
        str(cand.path),
        cand.search_dir,
        cand.real,
        sig,
        fields,
    )
    return Loaded(entry, diags, sig)


def _diagnostics(raw: object, cand: Candidate) -> tuple[Diagnostic, ...] | None:
    if not raw:
        return () if raw == [] else None
    if not isinstance(raw, list):
        return None
    out = []
    skill_file = Path(cand.path, "SKILL.md")
    for item in raw:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and isinstance(item[1], str)
            and item[2] in _LEVELS
        ):
            return None
        reason, code, level = item
        out.append(Diagnostic(path=skill_file, reason=reason, code=code, level=level, key=cand.key))
    return tuple(out)
