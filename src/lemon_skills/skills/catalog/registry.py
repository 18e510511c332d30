"""The skill registry: a per-cwd cache of visible skills that notices changes on disk by itself.

Each call checks the search dirs' mtimes (a handful of stats), so added and removed skills are
seen at once; a sweep over every SKILL.md's stat signature, at most every ``stat_interval``
seconds, catches in-place edits. Parsed files are cached by signature, so a change re-reads
only what changed. Remote sources (MCP servers offering skills) that list nothing are asked
again on the same schedule, or at once when a skills.json changed. ``refresh()`` drops
everything.
"""

from __future__ import annotations

import difflib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import inf
from operator import attrgetter
from pathlib import Path
from typing import Any

from lemon_skills._gc import gc_paused
from lemon_skills.context import current
from lemon_skills.errors import ConfigError, SkillNotFound
from lemon_skills.paths import (
    PathArg,
    global_skill_dirs,
    project_skill_dirs,
    resolve_cwd,
    scope_root,
)
from lemon_skills.skills import hosts, remote
from lemon_skills.skills.catalog import cache as disk_cache
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.catalog.discovery import (
    Candidate,
    FileSig,
    Loaded,
    file_sig,
    load_candidate,
    merge,
    scan_dirs,
)
from lemon_skills.skills.format.model import Diagnostic, Entry, Source

DEFAULT_STAT_INTERVAL_S = 0.5
SKILL_SUFFIX = "/SKILL.md"
#: From this many skills in one scope, entries hold no body (it is read again when needed):
#: 50,000 bodies are close to a gigabyte, and indexing reads each once.
LEAN_FROM = 20_000
_BY_KEY = attrgetter("key")


@dataclass(slots=True)
class _ScopeState:
    dirs: tuple[Path, ...]
    dir_sigs: tuple[FileSig | None, ...]
    watched: dict[str, FileSig | None]
    entries: list[Entry]
    diagnostics: list[Diagnostic]
    swept_at: float
    generation: int


@dataclass(frozen=True, slots=True, eq=False)
class View:
    """Everything visible from one cwd at one moment; immutable, so derived data can be memoised."""

    cwd: Path | None
    entries: tuple[Entry, ...]
    by_key: dict[str, Entry]
    diagnostics: tuple[Diagnostic, ...]
    shadowed: dict[str, list[Entry]]
    enablement: enablement.Enablement
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def enabled(self) -> tuple[Entry, ...]:
        """Entries not disabled in either scope."""
        cached = self.memo.get("enabled")
        if cached is None:
            cached = tuple(e for e in self.entries if e.enabled)
            self.memo["enabled"] = cached
        return cached


class Registry:
    """Thread-safe cache of skills per scope and per cwd."""

    def __init__(
        self,
        *,
        stat_interval: float = DEFAULT_STAT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stat_interval = stat_interval
        self._clock = clock
        self._lock = threading.RLock()
        self._scopes: dict[tuple[Source, tuple[Path, ...]], _ScopeState] = {}
        self._parsed: dict[str, Loaded] = {}
        self._disk_read: set[Path] = set()
        self._views: dict[Path | None, tuple[tuple[Any, ...], View]] = {}
        self._remote: dict[Path | None, tuple[tuple[Any, ...], float, tuple[object, ...]]] = {}
        self._generation = 0

    def view(self, cwd: Path | None) -> View:
        """Return the current view for ``cwd`` (None = global skills only)."""
        with self._lock:
            g = self._scope("global", tuple(global_skill_dirs()))
            p = self._scope("project", tuple(project_skill_dirs(cwd))) if cwd is not None else None
            g_json = enablement.skills_json_path("global")
            p_json = scope_root("project", cwd) / "skills.json" if cwd is not None else None
            json_sigs = (file_sig(g_json), file_sig(p_json) if p_json else None)
            stamp = (
                self._remote_generation(cwd, json_sigs),
                id(g),
                g.generation,
                id(p),
                p.generation if p else -1,
                *json_sigs,
            )
            cached = self._views.get(cwd)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            view = self._build_view(cwd, g, p, enablement.load(g_json, p_json))
            self._views[cwd] = (stamp, view)
            return view

    def refresh(self) -> None:
        """Forget every cached scope, parse result and view; the next call reloads from disk."""
        with self._lock:
            self._scopes.clear()
            self._parsed.clear()
            self._disk_read.clear()
            self._views.clear()
            self._remote.clear()

    def state_problems(self) -> list[Diagnostic]:
        """The unreadable skills.json files behind the views built so far, each once."""
        with self._lock:
            seen = {
                d.path: d
                for _, v in self._views.values()
                for d in v.diagnostics
                if d.code == "corrupt_state"
            }
        return list(seen.values())

    def invalidate(self) -> None:
        """Make the next call re-check disk now (cheaper than ``refresh``); used after writes."""
        with self._lock:
            for state in self._scopes.values():
                state.swept_at = float("-inf")
                state.dir_sigs = ()
            self._remote.clear()

    def _remote_generation(self, cwd: Path | None, json_sigs: tuple[Any, ...]) -> object:
        """The remote sources' generation for ``cwd``. While they list nothing (no MCP server
        offers skills: the common case) they are asked again only once ``stat_interval`` has
        passed or a skills.json changed, so listing costs what it did without them."""
        now = self._clock()
        hit = self._remote.get(cwd)
        if hit is not None and now < hit[1] and hit[0] == json_sigs:
            return hit[2]
        gen = remote.generation(cwd)
        quiet = all(g == () for g in gen)
        self._remote[cwd] = (json_sigs, now + self._stat_interval if quiet else -inf, gen)
        return gen

    def _scope(self, source: Source, dirs: tuple[Path, ...]) -> _ScopeState:
        key = (source, dirs)
        state = self._scopes.get(key)
        dir_sigs = tuple(file_sig(d) for d in dirs)
        now = self._clock()
        if state is None or state.dir_sigs != dir_sigs:
            state = self._rescan(source, dirs, dir_sigs, now)
            self._scopes[key] = state
        elif now - state.swept_at >= self._stat_interval:
            state.swept_at = now
            if any(file_sig(p) != sig for p, sig in state.watched.items()):
                state = self._rescan(source, dirs, dir_sigs, now)
                self._scopes[key] = state
        return state

    def _rescan(
        self,
        source: Source,
        dirs: tuple[Path, ...],
        dir_sigs: tuple[FileSig | None, ...],
        now: float,
    ) -> _ScopeState:
        with gc_paused():
            return self._rescan_unpaused(source, dirs, dir_sigs, now)

    def _rescan_unpaused(
        self,
        source: Source,
        dirs: tuple[Path, ...],
        dir_sigs: tuple[FileSig | None, ...],
        now: float,
    ) -> _ScopeState:
        scan = scan_dirs(dirs, source)
        hosts.scan(source, dirs, scan)
        disk: dict[Path, disk_cache.Records] | None = {} if disk_cache.enabled() else None
        entries: list[Entry] = []
        dirty: dict[Path, set[str]] = {}
        parsed = self._parsed
        lean = len(scan.candidates) >= LEAN_FROM
        for cand in scan.candidates:
            skill_file = cand.file
            hit = parsed.get(skill_file)
            loaded = _reusable(hit, cand) if hit is not None and hit.sig == cand.sig else None
            if loaded is None:
                loaded = self._load(cand, disk, dirty)
                if lean and loaded.entry is not None:
                    loaded = loaded._replace(entry=loaded.entry.lean())
                parsed[skill_file] = loaded
            if loaded.diagnostics:
                scan.diagnostics.extend(loaded.diagnostics)
            if loaded.entry is not None:
                entries.append(loaded.entry)
        for search_dir, changed in dirty.items():
            here = [c for c in scan.candidates if c.search_dir == search_dir]
            self._save_disk(search_dir, here, (disk or {}).get(search_dir), changed)
        self._generation += 1
        return _ScopeState(
            dirs, dir_sigs, scan.watched, entries, scan.diagnostics, now, self._generation
        )

    def _load(
        self,
        cand: Candidate,
        disk: dict[Path, disk_cache.Records] | None,
        dirty: dict[Path, set[str]],
    ) -> Loaded:
        """Load one candidate from the disk cache or the file (``disk`` None: cache off).

        A search dir whose disk cache lacks a current record for it goes into ``dirty``, with
        the keys it lacks.
        """
        if not cand.file.endswith(SKILL_SUFFIX):
            return hosts.load(cand)
        if disk is None:
            return load_candidate(cand)
        records = disk.get(cand.search_dir)
        if records is None:
            records = self._disk(cand.search_dir)
            disk[cand.search_dir] = records
        loaded = records.decode(cand)
        if loaded is None:
            loaded = load_candidate(cand)
            dirty.setdefault(cand.search_dir, set()).add(cand.key)
        return loaded

    def _disk(self, search_dir: Path) -> disk_cache.Records:
        # Once a dir's cache has been read, everything it held is in memory: a skill added
        # later is not in it, and re-reading a large cache costs more than parsing one file.
        if search_dir in self._disk_read:
            return disk_cache.Records()
        self._disk_read.add(search_dir)
        return disk_cache.load(search_dir)

    def _save_disk(
        self,
        search_dir: Path,
        candidates: list[Candidate],
        read: disk_cache.Records | None,
        changed: set[str],
    ) -> None:
        parsed = self._parsed
        disk_cache.save(
            search_dir,
            [(cand, hit) for cand in candidates if (hit := parsed.get(cand.file)) is not None],
            over=read,
            changed=changed,
        )

    def _build_view(
        self, cwd: Path | None, g: _ScopeState, p: _ScopeState | None, en: enablement.Enablement
    ) -> View:
        ordered = [*(p.entries if p else ()), *g.entries]
        merged = merge(ordered)
        diags = [*(p.diagnostics if p else ()), *g.diagnostics, *merged.diagnostics]
        shadowed = merged.shadowed
        listings = remote.listings(cwd)
        if listings:
            by_name = {e.name: e for e in merged.entries.values()}
            by_name.update({e.key: e for e in merged.entries.values()})
            extra, remote_diags, hidden = remote.entries(listings, by_name, cwd)
            merged.entries.update((e.key, e) for e in extra)
            diags.extend(remote_diags)
            shadowed = {**shadowed}
            for key, more in hidden.items():
                shadowed[key] = [*shadowed.get(key, []), *more]
        # Corrupt state first: doctor and the CLI name it before anything else.
        diags[:0] = [
            Diagnostic(
                path=err.path or Path("skills.json"),
                reason=unreadable_state(err),
                code="corrupt_state",
            )
            for err in en.errors
        ]
        diags.extend(
            Diagnostic(
                path=err.path or Path("skills.json"),
                reason=err.reason + "; the profiles of this file are ignored and an agent "
                "that names one is refused until it is fixed",
                code="corrupt_profiles",
            )
            for err in en.profile_errors
        )
        entries = tuple(sorted(merged.entries.values(), key=_BY_KEY))
        if en.errors:
            # Fail closed: the unreadable file could have disabled any of them.
            entries = tuple(e.with_enabled(False) for e in entries)
        elif en.disabled_global or en.disabled_project:
            entries = tuple(e.with_enabled(False) if en.is_disabled(e.key) else e for e in entries)
        return View(cwd, entries, {e.key: e for e in entries}, tuple(diags), shadowed, en)


def unreadable_state(err: ConfigError) -> str:
    """The one-line explanation of an unreadable skills.json: what it means and the fix."""
    return (
        f"{err.reason}; every skill is treated as disabled until it is fixed "
        "(repair the JSON, or move the file away to start with no skill disabled)"
    )


def _reusable(loaded: Loaded, cand: Candidate) -> Loaded | None:
    """A load outcome of the same file still valid for ``cand`` (not seen via another dir)."""
    e = loaded.entry
    if e is None or (
        e.source == cand.source
        and e.search_dir == cand.search_dir
        and e.key == cand.key
        and e.bundle == cand.bundle
    ):
        return loaded
    return None


def default_registry() -> Registry:
    """The registry of the default context (the one the facade functions use)."""
    return current().service(Registry, Registry)


def view(cwd: PathArg = None, *, refresh: bool = False) -> View:
    """Current registry view for ``cwd``."""
    reg = default_registry()
    if refresh:
        reg.refresh()
    return reg.view(resolve_cwd(cwd))


def require(key: str, *, cwd: PathArg = None) -> Entry:
    """Like ``get`` but raises ``SkillNotFound`` with close-key suggestions."""
    v = view(cwd)
    entry = v.by_key.get(key)
    if entry is None:
        raise SkillNotFound(key, suggestions=suggest(key, v.by_key))
    return entry


def suggest(key: str, keys: Sequence[str] | dict[str, Entry], *, n: int = 3) -> list[str]:
    """Close matches for a mistyped key."""
    return difflib.get_close_matches(key, list(keys), n=n, cutoff=0.6)
