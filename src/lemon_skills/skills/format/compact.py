"""A manifest as only its non-default fields: the compact form the manifest cache stores.

Almost every real SKILL.md sets nothing beyond ``name`` and ``description``, so the compact
form of most skills is an empty mapping: cheap to store, to parse and to keep in memory for
10,000 skills. The entry's own name and description are the defaults of those two fields.
``raw`` and ``metadata`` are not kept; they are re-read from the SKILL.md on first access.

Listing cached skills needs only this module: the parser (``manifest``) is imported when a
manifest is actually built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemon_skills.errors import ManifestError

if TYPE_CHECKING:
    from lemon_skills.skills.format.manifest import Manifest

Fields = Mapping[str, Any]

_OPT_STR = ("name", "version", "author", "license", "compatibility", "category")
_STRS = ("tags", "keywords", "platforms", "allowed_tools", "paths")
_FLAGS = ("disable_model_invocation", "attach", "always_apply")
_REQUIRES = ("bins", "any_bins", "env", "config", "mcp", "skills", "any_skills")
_FORMATS = ("yaml", "toml", "none")
#: Nearly every skill has YAML frontmatter, so the compact form leaves that out too.
_DEFAULT_FORMAT = "yaml"
_NO_PLATFORMS = ["any"]


def compact(m: Manifest, *, name: str, description: str) -> dict[str, Any]:
    """The JSON-safe fields of ``m`` that differ from the defaults (``name``/``description``
    default to the entry's own)."""
    from lemon_skills.skills.format.manifest import Manifest

    blank = Manifest()
    out: dict[str, Any] = {}
    if m.name != name:
        out["name"] = m.name
    if m.description != description:
        out["description"] = m.description
    for f in _OPT_STR[1:]:
        value = getattr(m, f)
        if value != getattr(blank, f):
            out[f] = value
    for f in _STRS:
        value = getattr(m, f)
        if value != getattr(blank, f):
            out[f] = list(value)
    requires = {r: list(v) for r in _REQUIRES if (v := getattr(m.requires, r))}
    if requires:
        out["requires"] = requires
    for f in _FLAGS:
        if getattr(m, f):
            out[f] = True
    if m.extra:
        out["extra"] = dict(m.extra)
    if m.format != _DEFAULT_FORMAT:
        out["format"] = m.format
    return out


def is_valid(fields: object) -> bool:
    """True when ``fields`` has the shape ``compact`` produces (a damaged cache has not)."""
    if not isinstance(fields, dict):
        return False
    for f, value in fields.items():
        if f in _OPT_STR:
            ok = value is None or isinstance(value, str)
        elif f in _STRS:
            ok = _is_strs(value)
        elif f == "requires":
            ok = isinstance(value, dict) and all(
                r in _REQUIRES and _is_strs(v) for r, v in value.items()
            )
        elif f == "description":
            ok = isinstance(value, str)
        elif f in _FLAGS:
            ok = isinstance(value, bool)
        elif f == "extra":
            ok = isinstance(value, dict)
        else:
            ok = f == "format" and value in _FORMATS
        if not ok:
            return False
    return True


def _is_strs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def listing(fields: Fields) -> tuple[Any, list[str], list[str], Any, list[str]]:
    """(version, tags, keywords, category, platforms) without building a ``Manifest``."""
    if not fields:
        return None, [], [], None, list(_NO_PLATFORMS)
    get = fields.get
    return (
        get("version"),
        list(get("tags", ())),
        list(get("keywords", ())),
        get("category"),
        list(get("platforms", _NO_PLATFORMS)),
    )


def expand(fields: Fields, *, name: str, description: str, skill_file: Path) -> Manifest:
    """The full manifest; ``raw`` and ``metadata`` are read from the SKILL.md when first used."""
    from lemon_skills.skills.format.manifest import Manifest, Requires

    kwargs: dict[str, Any] = {
        f: tuple(v) if isinstance(v, list) else v
        for f, v in fields.items()
        if f not in ("requires", "name", "description", "extra")
    }
    requires = fields.get("requires") or {}
    frontmatter = _Frontmatter(skill_file)
    return Manifest(
        name=fields.get("name", name),
        description=fields.get("description", description),
        requires=Requires(**{r: tuple(v) for r, v in requires.items()}),
        extra=fields.get("extra") or {},
        raw=LazyMap(frontmatter.raw),
        metadata=LazyMap(frontmatter.metadata),
        **{"format": _DEFAULT_FORMAT, **kwargs},
    )


class _Frontmatter:
    """Re-parses one SKILL.md's frontmatter on demand (shared by raw and metadata)."""

    __slots__ = ("_file", "_manifest")

    def __init__(self, skill_file: Path) -> None:
        self._file = skill_file
        self._manifest: Manifest | None = None

    def _get(self) -> Manifest:
        if self._manifest is None:
            from lemon_skills.skills.format import confine
            from lemon_skills.skills.format.manifest import Manifest, parse_skill

            try:
                text = confine.read_text(self._file)
                self._manifest = parse_skill(text).manifest
            except (OSError, UnicodeDecodeError, ManifestError):
                self._manifest = Manifest()
        return self._manifest

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
