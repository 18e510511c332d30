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
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from lemon_skills import _fs
from lemon_skills.paths import agent_dir
from lemon_skills.skills import compact
from lemon_skills.skills.discovery import Candidate, Loaded
from lemon_skills.skills.model import Diagnostic, cached_entry

#: Bump whenever parsing, normalisation or the record layout changes.
PARSER_VERSION = 5
FORMAT_VERSION = 6


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


def load(search_dir: Path) -> Records:
    """The records of ``search_dir``; empty when the file is missing or unusable."""
    try:
        data = json.loads(cache_path(search_dir).read_bytes())
    except (OSError, ValueError):  # missing, unreadable, truncated or not JSON
        return Records()
    if (
        not isinstance(data, dict)
        or data.get("version") != FORMAT_VERSION
        or data.get("parser") != PARSER_VERSION
        or data.get("dir") != str(search_dir)
    ):
        return Records()
    return Records(data)


def save(search_dir: Path, loaded: Iterable[tuple[Candidate, Loaded]]) -> None:
    """Write the cache of one search dir; failures are logged and ignored."""
    data: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "parser": PARSER_VERSION,
        "dir": str(search_dir),
        **_columns(loaded),
    }
    try:
        # ASCII with \u escapes: pure-ASCII JSON is read back a third faster than UTF-8.
        _fs.write_text_atomic(cache_path(search_dir), json.dumps(data, check_circular=False))
    except OSError as exc:
        import logging  # only on this rare path: logging costs start-up time

        logging.getLogger(__name__).debug("cannot write skills cache %s: %s", search_dir, exc)


# The file holds one column per field, row i describing keys[i]:
#   keys          skill dir names
#   sigs          mtime_ns, size, inode of each SKILL.md (three numbers per key)
#   names         the entry's name, or null when it is the key
#   descriptions  the description, or null when the file failed to load (no entry)
#   fields        key -> ``compact.compact`` of the manifest, only for the few that set more
#   diagnostics   key -> [[reason, code, level], ...], only for keys that have any
# Columns, not one array per skill: no container per skill to parse, and most skills need
# nothing beyond their row in four flat lists.
_COLUMNS = ("keys", "sigs", "names", "descriptions")
_LEVELS = ("error", "warning", "info")
_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


def _columns(loaded: Iterable[tuple[Candidate, Loaded]]) -> dict[str, Any]:
    keys: list[str] = []
    sigs: list[int] = []
    names: list[str | None] = []
    descriptions: list[str | None] = []
    fields: dict[str, dict[str, Any]] = {}
    diagnostics: dict[str, list[list[str]]] = {}
    for cand, outcome in loaded:
        key, e = cand.key, outcome.entry
        keys.append(key)
        sigs.extend(cand.sig)
        names.append(None if e is None or e.name == key else e.name)
        descriptions.append(None if e is None else e.description)
        compact_fields = e.compact_manifest() if e is not None else None
        if compact_fields:
            fields[key] = compact_fields
        if outcome.diagnostics:
            diagnostics[key] = [[d.reason, d.code, d.level] for d in outcome.diagnostics]
    return {
        "keys": keys,
        "sigs": sigs,
        "names": names,
        "descriptions": descriptions,
        "fields": fields,
        "diagnostics": diagnostics,
    }


class Records:
    """One search dir's cache file, read: what each skill's last load produced, by key."""

    __slots__ = ("_row", "_sigs", "_names", "_descriptions", "_fields", "_diagnostics")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._row: dict[str, int] = {}
        if data is None or not _well_formed(data):
            return
        self._sigs: list[Any] = data["sigs"]
        self._names: list[Any] = data["names"]
        self._descriptions: list[Any] = data["descriptions"]
        self._fields: dict[str, Any] = data["fields"]
        self._diagnostics: dict[str, Any] = data["diagnostics"]
        self._row = {k: i for i, k in enumerate(data["keys"]) if type(k) is str}

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __len__(self) -> int:
        return len(self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def keys(self) -> list[str]:
        """The skill keys with a record."""
        return list(self._row)

    def decode(self, cand: Candidate) -> Loaded | None:
        """The load outcome recorded for ``cand``, or None when there is none for the file as
        it is now (or the record is damaged)."""
        # Runs once per skill on every cold start: plain indexing, every check inline.
        key, sig = cand.key, cand.sig
        i = self._row.get(key)
        if i is None:
            return None
        sigs, j = self._sigs, 3 * i
        if sigs[j] != sig[0] or sigs[j + 1] != sig[1] or sigs[j + 2] != sig[2]:
            return None
        raw = self._diagnostics.get(key)
        diags = () if raw is None else _diagnostics(raw, cand)
        description = self._descriptions[i]
        if diags is None:
            return None
        if description is None:
            return Loaded(None, diags, sig) if diags else None
        name = self._names[i]
        if name is None:
            name = key
        fields = self._fields.get(key, _NO_FIELDS)
        if (
            type(name) is not str
            or type(description) is not str
            or not (fields is _NO_FIELDS or compact.is_valid(fields))
        ):
            return None
        entry = cached_entry(
            key,
            name,
            description,
            cand.source,
            str(cand.path),
            cand.search_dir,
            cand.real,
            sig,
            fields,
            cand.bundle,
        )
        return Loaded(entry, diags, sig)


def _well_formed(data: Mapping[str, Any]) -> bool:
    columns = [c for c in (data.get(name) for name in _COLUMNS) if isinstance(c, list)]
    if len(columns) != len(_COLUMNS):
        return False
    keys, sigs, names, descriptions = columns
    return (
        len(sigs) == 3 * len(keys)
        and len(names) == len(descriptions) == len(keys)
        and isinstance(data.get("fields"), dict)
        and isinstance(data.get("diagnostics"), dict)
    )


def _diagnostics(raw: object, cand: Candidate) -> tuple[Diagnostic, ...] | None:
    if not isinstance(raw, list) or not raw:
        return None
    out = []
    skill_file = Path(cand.file)
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
