"""The skill registry: a per-cwd cache of visible skills that notices changes on disk by itself.

Each call checks the search dirs' mtimes (a handful of stats), so added and removed skills are
seen at once; a sweep over every SKILL.md's stat signature, at most every ``stat_interval``
seconds, catches in-place edits. Parsed files are cached by signature, so a change re-reads
only what changed. ``refresh()`` drops everything.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..paths import global_skill_dirs, project_skill_dirs, scope_root
from . import enablement
from .discovery import Candidate, FileSig, Loaded, file_sig, load_candidate, merge, scan_dirs
from .model import Diagnostic, Entry, Source

DEFAULT_STAT_INTERVAL_S = 0.5


@dataclass(slots=True)
class _ScopeState:
    dirs: tuple[Path, ...]
    dir_sigs: tuple[FileSig | None, ...]
    watched: dict[Path, FileSig | None]
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
        self._parsed: dict[Path, tuple[FileSig, Loaded]] = {}
        self._views: dict[Path | None, tuple[tuple[Any, ...], View]] = {}
        self._generation = 0

    def view(self, cwd: Path | None) -> View:
        """Return the current view for ``cwd`` (None = global skills only)."""
        with self._lock:
            g = self._scope("global", tuple(global_skill_dirs()))
            p = self._scope("project", tuple(project_skill_dirs(cwd))) if cwd is not None else None
            g_json = enablement.skills_json_path("global")
            p_json = scope_root("project", cwd) / "skills.json" if cwd is not None else None
            stamp = (
                id(g),
                g.generation,
                id(p),
                p.generation if p else -1,
                file_sig(g_json),
                file_sig(p_json) if p_json else None,
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
            self._views.clear()

    def invalidate(self, path: Path | None = None) -> None:
        """Make the next call re-check disk now (cheaper than ``refresh``); used after writes."""
        with self._lock:
            if path is not None:
                self._parsed.pop(path, None)
            for state in self._scopes.values():
                state.swept_at = float("-inf")
                state.dir_sigs = ()

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
        scan = scan_dirs(dirs, source)
        entries: list[Entry] = []
        for cand in scan.candidates:
            loaded = self._load(cand)
            scan.diagnostics.extend(loaded.diagnostics)
            if loaded.entry is not None:
                entries.append(loaded.entry)
        self._generation += 1
        return _ScopeState(
            dirs, dir_sigs, scan.watched, entries, scan.diagnostics, now, self._generation
        )

    def _load(self, cand: Candidate) -> Loaded:
        skill_file = cand.path / "SKILL.md"
        hit = self._parsed.get(skill_file)
        if hit is not None and hit[0] == cand.sig:
            e = hit[1].entry
            if e is None or (e.source == cand.source and e.search_dir == cand.search_dir):
                return hit[1]
        loaded = load_candidate(cand)
        self._parsed[skill_file] = (cand.sig, loaded)
        return loaded

    def _build_view(
        self, cwd: Path | None, g: _ScopeState, p: _ScopeState | None, en: enablement.Enablement
    ) -> View:
        ordered = [*(p.entries if p else ()), *g.entries]
        merged = merge(ordered)
        diags = [*(p.diagnostics if p else ()), *g.diagnostics, *merged.diagnostics]
        diags.extend(
            Diagnostic(
                path=err.path or Path("skills.json"),
                reason=err.reason + "; "
                "enable/disable state from this file is ignored until it is fixed",
                code="corrupt_state",
            )
            for err in en.errors
        )
        entries = tuple(
            replace(e, enabled=False) if en.is_disabled(e.key) else e
            for e in sorted(merged.entries.values(), key=lambda e: e.key)
        )
        return View(cwd, entries, {e.key: e for e in entries}, tuple(diags), merged.shadowed, en)


_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The process-wide registry the facade functions use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Registry()
        return _default
