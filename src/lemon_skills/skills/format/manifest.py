"""SKILL.md frontmatter as a ``Manifest``: its fields normalised, and ``parse_skill`` for a
whole file (``frontmatter`` cuts the file and reads the YAML or TOML).

Pure functions. Loading is lenient in the way the Agent Skills client guide asks
for: a field of the wrong shape is dropped with a warning instead of hiding the skill, and
only frontmatter that cannot be parsed at all is an error. ``lint`` applies the strict rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemon_skills.skills.format.frontmatter import (
    FieldWarning,
    Format,
    load_toml,
    load_yaml,
    split_frontmatter,
)

PLATFORMS = ("linux", "darwin", "win32", "any")
_PLATFORM_ALIASES = {"macos": "darwin", "mac": "darwin", "osx": "darwin", "windows": "win32"}

#: Fields lemon understands beyond the Agent Skills spec (lint reports them as extensions).
LEMON_FIELDS = frozenset(
    {
        "version",
        "author",
        "tags",
        "keywords",
        "category",
        "platforms",
        "requires",
        "disable-model-invocation",
        "user-invocable",
        "homepage",
    }
)
SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
#: Fields of other hosts (Claude Code, Codex, Cursor, Gemini CLI) that skills carry; lint
#: reports them as information, and the ones lemon does not act on are kept in ``extra``.
HOST_FIELDS = frozenset(
    {
        "paths",
        "argument-hint",
        "arguments",
        "when_to_use",
        "model",
        "effort",
        "context",
        "agent",
        "hooks",
        "shell",
        "globs",
        "alwaysApply",
    }
)
#: The frontmatter keys lemon acts on; every other key is preserved in ``Manifest.extra``.
USED_FIELDS = (SPEC_FIELDS | LEMON_FIELDS | {"paths"}) - {"user-invocable", "homepage"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Requires:
    """What a skill needs from the machine before it can be active."""

    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    #: MCP servers (by configured name) that must be configured (``requires.mcp_servers``).
    mcp: tuple[str, ...] = ()
    #: Skills that must all be visible and enabled; and skills of which one must be.
    skills: tuple[str, ...] = ()
    any_skills: tuple[str, ...] = ()

    def merged(self, other: Requires) -> Requires:
        """Union of two requirement sets, order preserved."""
        return Requires(
            bins=_union(self.bins, other.bins),
            any_bins=_union(self.any_bins, other.any_bins),
            env=_union(self.env, other.env),
            config=_union(self.config, other.config),
            mcp=_union(self.mcp, other.mcp),
            skills=_union(self.skills, other.skills),
            any_skills=_union(self.any_skills, other.any_skills),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """The normalised frontmatter of one SKILL.md."""

    name: str | None = None
    description: str = ""
    version: str | None = None
    author: str | None = None
    license: str | None = None
    compatibility: str | None = None
    tags: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    category: str | None = None
    platforms: tuple[str, ...] = ("any",)
    requires: Requires = field(default_factory=Requires)
    allowed_tools: tuple[str, ...] = ()
    disable_model_invocation: bool = False
    #: Globs of the files this skill is about (Claude Code ``paths``, Cursor ``globs``).
    paths: tuple[str, ...] = ()
    #: Injected whenever a file in play matches ``paths`` (Cursor auto-attached rules), not
    #: only when the request is about it too.
    attach: bool = False
    #: Injected on every request (Cursor ``alwaysApply``, ``.cursorrules``).
    always_apply: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: Frontmatter keys lemon does not act on (``user-invocable``, ``hooks``, ``model``...),
    #: kept as written (JSON-safe) so hosts that use them lose nothing.
    extra: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)
    format: Format = "none"


@dataclass(frozen=True, slots=True)
class ParsedSkill:
    """Result of parsing one SKILL.md: manifest, body and non-fatal warnings."""

    manifest: Manifest
    body: str
    warnings: tuple[FieldWarning, ...]
    body_line: int  # 1-based line number where the body starts in the file


def parse_skill(text: str, *, path: Path | None = None) -> ParsedSkill:
    """Parse a whole SKILL.md into a manifest, body and warnings.

    Raises:
        ManifestError: the frontmatter cannot be split or parsed, or is not a mapping.
    """
    split = split_frontmatter(text, path=path)
    warnings: list[FieldWarning] = []
    if split.format == "none":
        data: dict[str, Any] = {}
        warnings.append(FieldWarning("frontmatter", "no frontmatter; name and description unset"))
    elif split.format == "toml":
        data = load_toml(split.frontmatter, path)
    else:
        data = load_yaml(split.frontmatter, path, warnings)
    manifest = build_manifest(data, fmt=split.format, warnings=warnings)
    return ParsedSkill(manifest, split.body, tuple(warnings), split.body_line)


def build_manifest(
    data: Mapping[str, Any], *, fmt: Format = "yaml", warnings: list[FieldWarning] | None = None
) -> Manifest:
    """Normalise a frontmatter mapping; shape problems become ``warnings``, never exceptions."""
    w: list[FieldWarning] = [] if warnings is None else warnings
    metadata = _mapping(data, "metadata", w)
    lemon = metadata.get("lemon")
    lemon_meta: Mapping[str, Any] = lemon if isinstance(lemon, Mapping) else {}
    requires = _requires(data.get("requires"), "requires", w)
    if "requires" in lemon_meta:
        requires = requires.merged(_requires(lemon_meta["requires"], "metadata.lemon.requires", w))
    platforms = _platforms(data, lemon_meta, w)
    description = _text(data, "description", w) or ""
    return Manifest(
        name=_text(data, "name", w),
        description=" ".join(description.split()),
        version=_text(data, "version", w),
        author=_text(data, "author", w),
        license=_text(data, "license", w),
        compatibility=_text(data, "compatibility", w),
        tags=_union(
            _strings(data.get("tags"), "tags", w),
            _strings(lemon_meta.get("tags"), "metadata.lemon.tags", w),
        ),
        keywords=_union(
            _strings(data.get("keywords"), "keywords", w),
            _strings(lemon_meta.get("keywords"), "metadata.lemon.keywords", w),
        ),
        category=_text(data, "category", w) or _opt_str(lemon_meta.get("category")),
        platforms=platforms,
        requires=requires,
        allowed_tools=_strings(data.get("allowed-tools"), "allowed-tools", w, sep=" "),
        disable_model_invocation=_flag(data, "disable-model-invocation", w),
        paths=globs(data.get("paths"), "paths", w),
        metadata=metadata,
        extra={k: jsonable(v) for k, v in data.items() if k not in USED_FIELDS},
        raw=dict(data),
        format=fmt,
    )


def _text(data: Mapping[str, Any], key: str, w: list[FieldWarning]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, Mapping | list):
        w.append(FieldWarning(key, f"must be a string, got {type(value).__name__}; ignored"))
        return None
    return str(value)


def _opt_str(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _flag(data: Mapping[str, Any], key: str, w: list[FieldWarning]) -> bool:
    value = data.get(key, False)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no"):
        return value.lower() in ("true", "yes")
    w.append(FieldWarning(key, f"must be true or false, got {value!r}; treated as false"))
    return False


def _mapping(data: Mapping[str, Any], key: str, w: list[FieldWarning]) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    w.append(FieldWarning(key, f"must be a mapping, got {type(value).__name__}; ignored"))
    return {}


def _strings(value: Any, key: str, w: list[FieldWarning], *, sep: str = ",") -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        parts = value.split(sep) if sep != " " else value.split()
        return tuple(p.strip() for p in parts if p.strip())
    if isinstance(value, list | tuple):
        out = []
        for item in value:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                if str(item).strip():
                    out.append(str(item).strip())
            else:
                w.append(FieldWarning(key, f"entry {item!r} is not a string; ignored"))
        return tuple(out)
    w.append(FieldWarning(key, f"must be a list of strings, got {type(value).__name__}; ignored"))
    return ()


def _requires(value: Any, key: str, w: list[FieldWarning]) -> Requires:
    if value is None:
        return Requires()
    if not isinstance(value, Mapping):
        w.append(
            FieldWarning(key, f"must be a mapping with bins/env/config, got {value!r}; ignored")
        )
        return Requires()
    known = {"bins", "any_bins", "anyBins", "env", "config", "mcp", "mcp_servers"}
    known |= {"skills", "any_skills"}
    w.extend(
        FieldWarning(f"{key}.{extra}", "unknown requirement kind; ignored")
        for extra in sorted(set(map(str, value)) - known)
    )
    return Requires(
        bins=_strings(value.get("bins"), f"{key}.bins", w),
        any_bins=_strings(value.get("any_bins", value.get("anyBins")), f"{key}.any_bins", w),
        env=_strings(value.get("env"), f"{key}.env", w),
        config=_strings(value.get("config"), f"{key}.config", w),
        mcp=_union(
            _strings(value.get("mcp"), f"{key}.mcp", w),
            _strings(value.get("mcp_servers"), f"{key}.mcp_servers", w),
        ),
        **_skill_deps(value, key, w),
    )


def _skill_deps(value: Mapping[str, Any], key: str, w: list[FieldWarning]) -> dict[str, Any]:
    """``skills: [a, b]`` (all of), ``skills: {all_of: [...], any_of: [...]}``, ``any_skills``."""
    skills = value.get("skills")
    any_of = _strings(value.get("any_skills"), f"{key}.any_skills", w)
    if isinstance(skills, Mapping):
        unknown = sorted(set(map(str, skills)) - {"all_of", "any_of", "all", "any"})
        w.extend(
            FieldWarning(f"{key}.skills.{u}", "expected all_of or any_of; ignored") for u in unknown
        )
        all_of = _strings(skills.get("all_of", skills.get("all")), f"{key}.skills.all_of", w)
        any_of = _union(
            any_of, _strings(skills.get("any_of", skills.get("any")), f"{key}.skills.any_of", w)
        )
        return {"skills": all_of, "any_skills": any_of}
    return {"skills": _strings(skills, f"{key}.skills", w), "any_skills": any_of}


def globs(value: Any, key: str, w: list[FieldWarning]) -> tuple[str, ...]:
    """Glob patterns from a list, or from one string of comma-separated patterns (a comma
    inside ``{a,b}`` belongs to the pattern)."""
    if not isinstance(value, str):
        return _strings(value, key, w)
    out, depth, start = [], 0, 0
    for i, ch in enumerate(value):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(value[start:i])
            start = i + 1
    out.append(value[start:])
    return tuple(p.strip() for p in out if p.strip())


def jsonable(value: Any) -> Any:
    """``value`` with every non-JSON scalar (dates, timestamps) written as text."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return str(value)


def _platforms(
    data: Mapping[str, Any], lemon_meta: Mapping[str, Any], w: list[FieldWarning]
) -> tuple[str, ...]:
    declared: tuple[str, ...] = ()
    if "platforms" in data:
        declared = _strings(data.get("platforms"), "platforms", w)
    if "os" in lemon_meta:
        declared = _union(declared, _strings(lemon_meta.get("os"), "metadata.lemon.os", w))
    out: list[str] = []
    for raw in declared:
        name = _PLATFORM_ALIASES.get(raw.lower(), raw.lower())
        if name not in PLATFORMS:
            w.append(
                FieldWarning(
                    "platforms", f"unknown platform {raw!r}; allowed: {', '.join(PLATFORMS)}"
                )
            )
            continue
        out.append(name)
    return tuple(dict.fromkeys(out)) or ("any",)


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*a, *b)))
