"""Domain records of the skills core: ``Entry`` (one visible skill) and ``Diagnostic``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from lemon_skills.skills.format.compact import compact, expand, listing

if TYPE_CHECKING:
    from lemon_skills.skills.format.manifest import Manifest

Source = Literal["project", "global", "mcp"]
Level = Literal["error", "warning", "info"]
BundleKind = Literal["claude-plugin", "codex-plugin", "gemini-extension", "cursor-rules"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillBundle:
    """The plugin, extension or rules folder a skill came from."""

    kind: BundleKind
    name: str
    #: The bundle's root directory (the plugin folder, or the project of a rules folder).
    root: str
    #: The marketplace that listed the plugin, when it came through one.
    marketplace: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "name": self.name,
            "root": self.root,
            "marketplace": self.marketplace,
        }


def _body_of(text: str) -> str:
    from lemon_skills.skills.format.frontmatter import split_frontmatter

    return split_frontmatter(text).body


class RemoteText(Protocol):
    """SKILL.md of a skill from a remote source."""

    def __call__(self) -> str:
        """The text for use: verified, approved and audited (raises when it may not be used)."""
        ...

    def indexable(self) -> str:
        """The text for ranking only: verified against the listing, never shown."""
        ...

    def manifest(self) -> Manifest:
        """The manifest built from the listing's frontmatter (no fetch)."""
        ...

    def version(self) -> str | None:
        """What identifies this text as listed (its digest), without fetching it; None when
        the listing does not say."""
        ...


def _remote_body(loader: RemoteText) -> str:
    from lemon_skills.errors import LemonSkillsError

    # Like an unreadable file on disk: ranking sees no body; views call ``content()`` and
    # report the refusal.
    try:
        return _body_of(loader.indexable())
    except LemonSkillsError:
        return ""


def _read_body(path: str, root: Path | None) -> str:
    from lemon_skills.skills.format import confine
    from lemon_skills.skills.format.frontmatter import split_frontmatter

    try:
        return split_frontmatter(confine.read_text(path, root)).body
    except (OSError, UnicodeDecodeError, ValueError):
        return ""


@dataclass(frozen=True, slots=True, init=False, repr=False)
class Entry:
    """One skill as the agent sees it.

    ``key`` is the directory name and is what every API takes; ``name`` is the frontmatter
    name (defaulting to the key). ``body`` is the SKILL.md text after the frontmatter and
    ``manifest`` the parsed frontmatter; for entries the registry loaded from its manifest
    cache both are read from disk on first use, so listing skills never reads whole files.
    """

    key: str
    name: str
    description: str
    source: Source
    enabled: bool
    search_dir: Path | None
    real_path: str
    #: (mtime_ns, size, inode) of SKILL.md when loaded; None for entries built in memory.
    file_sig: tuple[int, int, int] | None = field(compare=False)
    #: The plugin, extension or rules folder the skill came from; None for a plain skill dir.
    bundle: SkillBundle | None
    # The instructions file when it is not <path>/SKILL.md (a Cursor rule).
    _file: str | None
    # The skill dir as text: building a Path per skill costs more than the rest of a cold load.
    _path: str
    _path_obj: Path | None = field(compare=False)
    _body: str | None = field(compare=False)
    _manifest: Manifest | None = field(compare=False)
    # The manifest in compact form (see ``compact``), expanded on first use.
    _fields: Mapping[str, Any] | None = field(compare=False)
    #: The MCP server an ``mcp`` entry comes from (None for skills on disk).
    server: str | None = field(compare=False)
    # SKILL.md of a skill that is not on disk, fetched and checked by its source.
    _loader: RemoteText | None = field(compare=False)
    # Whether indexing reads the body without keeping it (a tree too large to hold them all).
    _lean: bool = field(compare=False)

    def __init__(
        self,
        *,
        key: str,
        name: str,
        description: str,
        source: Source,
        path: Path | str,
        enabled: bool = True,
        manifest: Manifest | None = None,
        body: str | None = None,
        search_dir: Path | None = None,
        real_path: str | None = None,
        file_sig: tuple[int, int, int] | None = None,
        fields: Mapping[str, Any] | None = None,
        bundle: SkillBundle | None = None,
        file: str | None = None,
        server: str | None = None,
        loader: RemoteText | None = None,
    ) -> None:
        init = object.__setattr__
        text = path if isinstance(path, str) else str(path)
        init(self, "key", key)
        init(self, "name", name)
        init(self, "description", description)
        init(self, "source", source)
        init(self, "enabled", enabled)
        init(self, "search_dir", search_dir)
        init(self, "real_path", real_path or (text if loader else os.path.realpath(text)))
        init(self, "file_sig", file_sig)
        init(self, "bundle", bundle)
        init(self, "_file", file)
        init(self, "_path", text)
        init(self, "_path_obj", None if isinstance(path, str) else path)
        init(self, "_body", body)
        init(self, "_manifest", manifest)
        init(self, "_fields", fields if manifest is None else None)
        init(self, "server", server)
        init(self, "_loader", loader)
        init(self, "_lean", False)

    def with_enabled(self, enabled: bool) -> Entry:
        """A copy with ``enabled`` changed that shares whatever was already read from disk."""
        return self._copy(enabled=enabled)

    def lean(self) -> Entry:
        """A copy that holds no body: ``body`` reads it from disk on first use, and
        ``read_body`` each time (a tree whose bodies would not fit in memory at once)."""
        if self._loader is not None or self.file_sig is None:
            return self  # not on disk: its text is kept where it came from
        return self._copy(_body=None, _lean=True)

    def remote_version(self) -> str | None:
        """For an entry not on disk, what identifies its text as its source lists it (no
        fetch); None otherwise."""
        return self._loader.version() if self._loader is not None else None

    def _copy(self, **changes: object) -> Entry:
        copy = object.__new__(Entry)
        for name in _SLOTS:
            object.__setattr__(copy, name, changes.get(name, getattr(self, name)))
        return copy

    @property
    def path(self) -> Path:
        """The skill directory."""
        p = self._path_obj
        if p is None:
            p = Path(self._path)
            object.__setattr__(self, "_path_obj", p)
        return p

    @property
    def manifest(self) -> Manifest:
        """The parsed frontmatter."""
        m = self._manifest
        if m is None and self._loader is not None:
            m = self._loader.manifest()
            object.__setattr__(self, "_manifest", m)
        if m is None:
            if self._fields is None:
                from lemon_skills.skills.format.manifest import Manifest

                m = Manifest()
            else:
                m = expand(
                    self._fields,
                    name=self.name,
                    description=self.description,
                    skill_file=self.skill_file,
                )
            object.__setattr__(self, "_manifest", m)
        return m

    def compact_manifest(self) -> dict[str, Any]:
        """The manifest as its non-default fields (the form the manifest cache stores)."""
        if self._fields is not None:
            return dict(self._fields)
        return compact(self.manifest, name=self.name, description=self.description)

    @property
    def body(self) -> str:
        """The instructions after the frontmatter."""
        b = self._body
        if b is None:
            if self._loader is not None:
                b = _remote_body(self._loader)
            else:
                b = _read_body(self._file or f"{self._path}/SKILL.md", self._confine_root)
            object.__setattr__(self, "_body", b)
        return b

    def read_body(self) -> str:
        """``body``, not kept by a lean entry that had not kept it already (indexing reads
        every body of a tree once)."""
        if self._body is not None or not self._lean:
            return self.body
        return _read_body(self._file or f"{self._path}/SKILL.md", self._confine_root)

    @property
    def skill_file(self) -> Path:
        """The SKILL.md of this skill (for a Cursor rule, its ``.mdc`` file)."""
        return self.path / "SKILL.md" if self._file is None else Path(self._file)

    @property
    def location(self) -> str:
        """Where the skill's file is, as shown to a model: a path, or for a skill served over
        MCP its ``skill://`` URI (a ``Path`` would fold its ``//`` into one slash)."""
        return self.real_path if self._loader is not None else str(self.skill_file)

    @property
    def extra(self) -> Mapping[str, Any]:
        """Frontmatter keys lemon does not act on, as written (``hooks``, ``model``...)."""
        fields = self._fields
        if self._manifest is None and fields is not None:
            return fields.get("extra") or {}
        return self.manifest.extra

    @property
    def paths(self) -> tuple[str, ...]:
        """Globs of the files this skill is about (``paths``/``globs``); () when any."""
        fields = self._fields
        if self._manifest is None and fields is not None:
            return tuple(fields.get("paths", ()))
        return self.manifest.paths

    @property
    def has_requirements(self) -> bool:
        """True when readiness depends on the machine: the manifest names requirements or
        platforms. Read without building the manifest of a cached entry, as the prompt
        catalogue asks it of every skill."""
        fields = self._fields
        if self._manifest is None and fields is not None:
            return "requires" in fields or "platforms" in fields
        m = self.manifest
        return m.platforms != ("any",) or m.requires != type(m.requires)()

    def requirement(self, name: str) -> tuple[str, ...]:
        """One ``requires`` list (``skills``, ``mcp``...), or ``platforms``, without building
        the manifest of a cached entry."""
        fields = self._fields
        if self._manifest is None and fields is not None:
            if name == "platforms":
                return tuple(fields.get("platforms", ("any",)))
            return tuple((fields.get("requires") or {}).get(name, ()))
        m = self.manifest
        return m.platforms if name == "platforms" else tuple(getattr(m.requires, name))

    def flag(self, name: str) -> bool:
        """A boolean manifest field (``always_apply``, ``attach``, ``disable_model_invocation``)
        without building the manifest of a cached entry."""
        fields = self._fields
        if self._manifest is None and fields is not None:
            return bool(fields.get(name, False))
        return bool(getattr(self.manifest, name))

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """Tools the skill asks to have pre-approved while it is in use (``allowed-tools``).

        A request for the host's approval policy, never a sandbox: the skill can still ask
        for any other tool, which then goes through the usual approval.
        """
        if self.source == "mcp":
            # SEP-2640: a remote server asking for tools is asking for access, never granted.
            return ()
        return self.manifest.allowed_tools

    def content(self) -> str:
        """Read SKILL.md (frontmatter included) from disk, or from its MCP server.

        Raises:
            PermissionError: SKILL.md now resolves outside the skill directory (refused).
        """
        from lemon_skills.skills.format import confine

        if self._loader is not None:
            return self._loader()
        return confine.read_text(self.skill_file, self._confine_root)

    @property
    def _confine_root(self) -> Path | None:
        """Where the instructions file must resolve: a rule's rules folder, else its own dir."""
        return self.search_dir if self._file is not None else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no body text); ``bundle``, ``extra`` and ``allowed_tools`` only
        when set, as ``skill list --json`` prints this for every skill."""
        fields = self._fields
        extra: Any = None
        tools: Any = None
        if self._manifest is None and fields is not None:
            if fields:
                version, tags, keywords, category, platforms = listing(fields)
                extra, tools = fields.get("extra"), fields.get("allowed_tools")
            else:  # nearly every skill: inline, as this runs for each one `skill list` prints
                version, tags, keywords, category, platforms = None, [], [], None, ["any"]
        else:
            m = self.manifest
            version, category = m.version, m.category
            tags, keywords, platforms = list(m.tags), list(m.keywords), list(m.platforms)
            extra, tools = m.extra, m.allowed_tools
        out = {
            "key": self.key,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": self._path,
            "enabled": self.enabled,
            "version": version,
            "tags": tags,
            "keywords": keywords,
            "category": category,
            "platforms": platforms,
        }
        if self.bundle is not None:
            out["bundle"] = self.bundle.to_dict()
        if extra:
            out["extra"] = dict(extra)
        if tools:
            out["allowed_tools"] = list(tools)
        if self.server is not None:
            out["server"] = self.server
        return out

    def __repr__(self) -> str:
        return (
            f"Entry(key={self.key!r}, name={self.name!r}, source={self.source!r}, "
            f"path={self._path!r}, enabled={self.enabled!r})"
        )


_SLOTS: tuple[str, ...] = Entry.__slots__


def cached_entry(
    key: str,
    name: str,
    description: str,
    source: Source,
    path: str,
    search_dir: Path,
    real_path: str,
    file_sig: tuple[int, int, int],
    fields: Mapping[str, Any],
    bundle: SkillBundle | None = None,
    file: str | None = None,
) -> Entry:
    """An entry loaded from the manifest cache (the manifest in compact form, body unread).

    Equivalent to ``Entry(..., fields=fields)`` at a fifth of the cost: the registry makes
    10,000 of these on a cold start. A frozen dataclass can only be filled through
    ``object.__setattr__``, one slow call per field; instead the fields are stored on a
    mutable twin with the very same slots, which then becomes an ``Entry`` (``__class__``
    assignment between identical layouts is part of the language).
    """
    e = _MutableEntry()
    e.key = key
    e.name = name
    e.description = description
    e.source = source
    e.enabled = True
    e.search_dir = search_dir
    e.real_path = real_path
    e.file_sig = file_sig
    e.bundle = bundle
    e._file = file
    e._path = path
    e._path_obj = None
    e._body = None
    e._manifest = None
    e._fields = fields
    e.server = None
    e._loader = None
    e._lean = False
    e.__class__ = Entry  # type: ignore[assignment]
    return e  # type: ignore[return-value]


def remote_entry(
    key: str,
    name: str,
    description: str,
    uri: str,
    search_dir: Path | None,
    server: str,
    loader: RemoteText,
) -> Entry:
    """An ``mcp`` entry (manifest and text come from ``loader``), built like ``cached_entry``:
    a consumer turns every listed skill of a server into one on each listing."""
    e = _MutableEntry()
    e.key = key
    e.name = name
    e.description = description
    e.source = "mcp"
    e.enabled = True
    e.search_dir = search_dir
    e.real_path = uri
    e.file_sig = None
    e.bundle = None
    e._file = None
    e._path = uri.removesuffix("/SKILL.md")
    e._path_obj = None
    e._body = None
    e._manifest = None
    e._fields = None
    e.server = server
    e._loader = loader
    e._lean = False
    e.__class__ = Entry  # type: ignore[assignment]
    return e  # type: ignore[return-value]


class _MutableEntry:
    """Same memory layout as ``Entry``, without the frozen guard (see ``cached_entry``)."""

    __slots__ = _SLOTS
    key: str
    name: str
    description: str
    source: Source
    enabled: bool
    search_dir: Path | None
    real_path: str
    file_sig: tuple[int, int, int] | None
    bundle: SkillBundle | None
    _file: str | None
    _path: str
    _path_obj: Path | None
    _body: str | None
    _manifest: Manifest | None
    _fields: Mapping[str, Any] | None
    server: str | None
    _loader: RemoteText | None
    _lean: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """A problem found while loading skills: bad file, shadowed key, corrupt state."""

    path: Path
    reason: str
    code: str
    level: Level = "error"
    key: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "path": str(self.path),
            "reason": self.reason,
            "code": self.code,
            "level": self.level,
            "key": self.key,
            "line": self.line,
        }

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{self.level}: {where}: {self.reason}"
