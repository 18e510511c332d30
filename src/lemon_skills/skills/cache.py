"""A persistent cache of parsed SKILL.md frontmatter, one file per search directory.

A cold start then only stats each SKILL.md and skips YAML parsing for unchanged files; bodies
are read lazily. Records are keyed by the file's (mtime_ns, size, inode) signature, so any edit
invalidates its record. This is a cache, not state: a missing, stale or corrupt cache file is
ignored and rewritten, and nothing is lost. ``LEMON_SKILLS_CACHE=0`` turns it off.

Records are flat lists of the normalised fields only, so loading 10,000 records stays cheap;
``raw`` and ``metadata`` (rarely needed) are re-read from the SKILL.md on first access.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .. import _fs
from ..errors import ManifestError
from ..paths import agent_dir
from .discovery import Candidate, Loaded
from .manifest import Manifest, Requires, parse_skill
from .model import Diagnostic, Entry, ManifestRef

logger = logging.getLogger(__name__)

#: Bump whenever parsing, normalisation or the record layout changes.
PARSER_VERSION = 3
FORMAT_VERSION = 3

Record = list[Any]


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """False when ``LEMON_SKILLS_CACHE`` is set to 0/false/no/off."""
    value = (os.environ if env is None else env).get("LEMON_SKILLS_CACHE", "1")
    return value.strip().lower() not in ("0", "false", "no", "off")


def cache_path(search_dir: Path) -> Path:
    """Where the cache of one search dir lives (under the agent dir, never in the skills)."""
    digest = hashlib.sha256(str(search_dir).encode("utf-8")).hexdigest()[:24]
    return agent_dir() / "cache" / "skills" / f"{digest}.json"


def load(search_dir: Path) -> dict[str, Record]:
    """The records of ``search_dir`` keyed by skill dir name; empty when unusable."""
    path = cache_path(search_dir)
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        logger.debug("ignoring unreadable skills cache %s", path)
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != FORMAT_VERSION
        or data.get("parser") != PARSER_VERSION
        or data.get("dir") != str(search_dir)
        or not isinstance(data.get("entries"), dict)
    ):
        return {}
    return data["entries"]  # type: ignore[no-any-return]


def save(search_dir: Path, records: Mapping[str, Record]) -> None:
    """Write the cache of one search dir; failures are logged and ignored."""
    data = {
        "version": FORMAT_VERSION,
        "parser": PARSER_VERSION,
        "dir": str(search_dir),
        "entries": dict(records),
    }
    try:
        _fs.write_text_atomic(cache_path(search_dir), json.dumps(data, ensure_ascii=False))
    except OSError as exc:
        logger.debug("cannot write skills cache for %s: %s", search_dir, exc)


# Record layout: [sig, diagnostics, manifest]; manifest is None for a file that failed to load,
# False when it cannot be cached, else the _SCALARS values followed by the requires lists.
_SCALARS = (
    "name",
    "description",
    "version",
    "author",
    "license",
    "compatibility",
    "tags",
    "keywords",
    "category",
    "platforms",
    "allowed_tools",
    "disable_model_invocation",
    "format",
)
_REQUIRES = ("bins", "any_bins", "env", "config", "mcp")
_LISTING = tuple(
    (f, _SCALARS.index(f)) for f in ("version", "tags", "keywords", "category", "platforms")
)


def encode(loaded: Loaded, sig: tuple[int, int, int]) -> Record:
    """A JSON-safe record of one load outcome (no manifest part when it is not JSON-safe)."""
    diags = [[d.reason, d.code, d.level] for d in loaded.diagnostics]
    if loaded.entry is None:
        return [list(sig), diags, None]
    m = loaded.entry.manifest
    values = [list(v) if isinstance(v, tuple) else v for v in (getattr(m, f) for f in _SCALARS)]
    values.extend(list(getattr(m.requires, r)) for r in _REQUIRES)
    return [list(sig), diags, values]


def is_current(record: Record | None, cand: Candidate) -> bool:
    """True when ``record`` was made from the file as it is now."""
    return record is not None and record[0] == list(cand.sig)


def decode(record: Record, cand: Candidate) -> Loaded | None:
    """Rebuild a load outcome for ``cand`` from its record, or None when it does not apply."""
    if not is_current(record, cand) or record[2] is False:
        return None
    try:
        diags = tuple(
            Diagnostic(path=cand.path / "SKILL.md", reason=r, code=c, level=lvl, key=cand.key)
            for r, c, lvl in record[1]
        )
        values = record[2]
        if values is None:
            return Loaded(None, diags)
        if len(values) != len(_SCALARS) + len(_REQUIRES):
            return None
        name, description = values[0], values[1]
        if not isinstance(description, str) or not isinstance(name, str | None):
            return None
    except (IndexError, TypeError, ValueError):
        return None
    entry = Entry(
        key=cand.key,
        name=name or cand.key,
        description=description,
        source=cand.source,
        path=cand.path,
        search_dir=cand.search_dir,
        real_path=cand.real,
        file_sig=cand.sig,
        # Most listings never look at the rest of the manifest: build it on first use.
        manifest_ref=ManifestRef(
            build=lambda: _manifest_or_parse(values, cand.path),
            listing={f: values[i] for f, i in _LISTING},
        ),
    )
    return Loaded(entry, diags)


def _manifest_or_parse(values: list[Any], skill_dir: Path) -> Manifest:
    try:
        return _manifest(values, skill_dir)
    except (TypeError, ValueError):  # a damaged record: the file itself is the truth
        return _Frontmatter(skill_dir).manifest()


def _manifest(values: list[Any], skill_dir: Path) -> Manifest:
    n = len(_SCALARS)
    kwargs: dict[str, Any] = {
        f: tuple(v) if isinstance(v, list) else v for f, v in zip(_SCALARS, values, strict=False)
    }
    requires = Requires(**{r: tuple(v) for r, v in zip(_REQUIRES, values[n:], strict=True)})
    frontmatter = _Frontmatter(skill_dir)
    return Manifest(
        requires=requires,
        raw=LazyMap(frontmatter.raw),
        metadata=LazyMap(frontmatter.metadata),
        **kwargs,
    )


class _Frontmatter:
    """Re-parses one SKILL.md's frontmatter on demand (shared by raw and metadata)."""

    __slots__ = ("_dir", "_manifest")

    def __init__(self, skill_dir: Path) -> None:
        self._dir = skill_dir
        self._manifest: Manifest | None = None

    def _get(self) -> Manifest:
        if self._manifest is None:
            try:
                text = (self._dir / "SKILL.md").read_text(encoding="utf-8")
                self._manifest = parse_skill(text).manifest
            except (OSError, UnicodeDecodeError, ManifestError):
                self._manifest = Manifest()
        return self._manifest

    def manifest(self) -> Manifest:
        return self._get()

    def raw(self) -> dict[str, Any]:
        return dict(self._get().raw)

    def metadata(self) -> dict[str, Any]:
        return dict(self._get().metadata)


class LazyMap(Mapping[str, Any]):
    """A read-only mapping computed on first access (raw frontmatter from the cache)."""

    __slots__ = ("_load", "_data")

    def __init__(self, load: Callable[[], dict[str, Any]]) -> None:
        self._load: Callable[[], dict[str, Any]] | None = load
        self._data: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._data is None:
            assert self._load is not None
            self._data, self._load = self._load(), None
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())
