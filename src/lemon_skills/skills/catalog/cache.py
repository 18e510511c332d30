"""A persistent cache of parsed SKILL.md frontmatter, one file per search directory.

A cold start then only stats each SKILL.md and skips YAML parsing for unchanged files; bodies
are read lazily. Records are keyed by the file's (mtime_ns, size, inode) signature, so any edit
invalidates its record. This is a cache, not state: a missing, stale, foreign or corrupt cache
file is ignored and rewritten, and nothing is lost. ``LEMON_SKILLS_CACHE=0`` turns it off.

An edit does not rewrite the file: the records of the skills read again since it was written
go to a delta beside it (``<name>.delta.json``, tagged with the file's inode, mtime and size,
so a delta of a replaced file is ignored), and the file is written whole again once the delta
holds an eighth of its records. Saving after one edit then costs one record, not all of them.

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
from lemon_skills.skills.catalog.discovery import Candidate, Loaded
from lemon_skills.skills.format import compact
from lemon_skills.skills.format.model import Diagnostic, cached_entry

#: Bump whenever parsing, normalisation or the record layout changes.
PARSER_VERSION = 6
FORMAT_VERSION = 6
#: The file is written whole again once its delta holds this share of its records (1/8).
DELTA_SHARE = 8


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


def delta_path(search_dir: Path) -> Path:
    """Where the records read again since the cache file was written live."""
    return cache_path(search_dir).with_suffix(".delta.json")


def _identity(st: os.stat_result) -> str:
    """Which version of a file this is: replacing it (atomically, by rename) changes it."""
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


def _read(path: Path, search_dir: Path) -> tuple[dict[str, Any], str] | None:
    try:
        with path.open("rb") as fh:
            identity = _identity(os.fstat(fh.fileno()))
            data = json.loads(fh.read())
    except (OSError, ValueError):  # missing, unreadable, truncated or not JSON
        return None
    if (
        not isinstance(data, dict)
        or data.get("version") != FORMAT_VERSION
        or data.get("parser") != PARSER_VERSION
        or data.get("dir") != str(search_dir)
    ):
        return None
    return data, identity


def load(search_dir: Path) -> Records:
    """The records of ``search_dir``; empty when the file is missing or unusable."""
    found = _read(cache_path(search_dir), search_dir)
    if found is None:
        return Records()
    data, identity = found
    delta = _read(delta_path(search_dir), search_dir)
    if delta is not None and delta[0].get("base") == identity and _well_formed(delta[0]):
        return Records(data, identity=identity, delta=delta[0])
    return Records(data, identity=identity)


def save(
    search_dir: Path,
    loaded: Iterable[tuple[Candidate, Loaded]],
    *,
    over: Records | None = None,
    changed: Iterable[str] = (),
) -> None:
    """Write the cache of one search dir; failures are logged and ignored. When ``over`` is
    what the file held when read and only the records of ``changed`` keys differ, only
    those (and those already in its delta) are written, to the delta."""
    path = cache_path(search_dir)
    try:
        if over is not None and over.identity is not None:
            keys = {*over.delta_keys, *changed}
            if len(keys) * DELTA_SHARE <= len(over) and _identity(path.stat()) == over.identity:
                picked = [pair for pair in loaded if pair[0].key in keys]
                _write(delta_path(search_dir), search_dir, picked, base=over.identity)
                return
        _write(path, search_dir, loaded)
        delta_path(search_dir).unlink(missing_ok=True)
    except OSError as exc:
        import logging  # only on this rare path: logging costs start-up time

        logging.getLogger(__name__).debug("cannot write skills cache %s: %s", search_dir, exc)


def _write(
    path: Path,
    search_dir: Path,
    loaded: Iterable[tuple[Candidate, Loaded]],
    base: str | None = None,
) -> None:
    data: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "parser": PARSER_VERSION,
        "dir": str(search_dir),
        **({} if base is None else {"base": base}),
        **_columns(loaded),
    }
    # ASCII with \u escapes: pure-ASCII JSON is read back a third faster than UTF-8. Not
    # synced to disk: a cache lost to a crash is rebuilt.
    text = json.dumps(data, check_circular=False)
    _fs.write_bytes_atomic(path, text.encode("ascii"), durable=False)


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
    """One search dir's cache file, read: what each skill's last load produced, by key (the
    delta's record where it has one)."""

    __slots__ = (
        "_row",
        "_sigs",
        "_names",
        "_descriptions",
        "_fields",
        "_diagnostics",
        "identity",
        "delta_keys",
    )

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        identity: str | None = None,
        delta: Mapping[str, Any] | None = None,
    ) -> None:
        self._row: dict[str, int] = {}
        #: The file's identity when read (None: nothing read), and the keys its delta holds.
        self.identity: str | None = None
        self.delta_keys: list[str] = []
        if data is None or not _well_formed(data):
            return
        self.identity = identity
        self._sigs: list[Any] = data["sigs"]
        self._names: list[Any] = data["names"]
        self._descriptions: list[Any] = data["descriptions"]
        self._fields: dict[str, Any] = data["fields"]
        self._diagnostics: dict[str, Any] = data["diagnostics"]
        self._row = {k: i for i, k in enumerate(data["keys"]) if type(k) is str}
        if delta is not None:
            self._merge(delta)

    def _merge(self, delta: Mapping[str, Any]) -> None:
        """Put the delta's records over the file's (their rows appended after its own)."""
        at = len(self._names)
        self._sigs = [*self._sigs, *delta["sigs"]]
        self._names = [*self._names, *delta["names"]]
        self._descriptions = [*self._descriptions, *delta["descriptions"]]
        self._fields = dict(self._fields)
        self._diagnostics = dict(self._diagnostics)
        for i, key in enumerate(delta["keys"]):
            if type(key) is not str:
                continue
            self._row[key] = at + i
            self.delta_keys.append(key)
            for mine, theirs in (
                (self._fields, delta["fields"]),
                (self._diagnostics, delta["diagnostics"]),
            ):
                mine.pop(key, None)
                if key in theirs:
                    mine[key] = theirs[key]

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
