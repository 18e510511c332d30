"""Per-directory views over one ``McpManager``: what each working directory's servers offer.

A view is what one working directory sees: its resolved config, the handles of its servers
and the catalogue built from their listings. Views share handles, so a server configured
globally is one connection however many projects use it; a project server is bound to its
project's view, and every tool spec names its handle directly, so calling a project tool never
depends on which directory the call comes from. Pinning's review of each listing decides which
tools a catalogue withholds. Calling the tools is ``calls.SourceCore``, built on these views.
"""

from __future__ import annotations

import difflib
import itertools
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from lemon_skills.errors import LemonSkillsError, McpToolError
from lemon_skills.mcp.catalog import pinning
from lemon_skills.mcp.catalog.build import CatalogEntry, ToolSpec, build
from lemon_skills.mcp.catalog.naming import NameConflict
from lemon_skills.mcp.config import resolve
from lemon_skills.mcp.session.handle import ServerHandle
from lemon_skills.mcp.session.lifecycle import ProgressFn
from lemon_skills.mcp.session.manager import McpManager
from lemon_skills.telemetry import otel

#: Catalogue versions, unique across views (tool objects are cached per version).
_generations = itertools.count(1)
#: Views kept for this many directories (least recently used dropped first).
MAX_VIEWS = 32


@dataclass(eq=False)
class View:
    """One directory's servers and catalogue."""

    cwd: Path
    config: resolve.ResolvedConfig
    fingerprint: tuple[object, ...]
    handles: list[ServerHandle]
    specs: list[ToolSpec] = field(default_factory=list)
    by_name: dict[str, ToolSpec] = field(default_factory=dict)
    conflicts: list[NameConflict] = field(default_factory=list)
    #: Each connected server's ``instructions`` (from its initialize result), by server name.
    instructions: dict[str, str] = field(default_factory=dict)
    #: Tool ranking indexes of this catalogue version, by server subset (see ``toolsearch``).
    search: dict[Any, Any] = field(default_factory=dict)
    versions: tuple[int, ...] | None = None
    refreshed_at: float | None = None
    generation: int = 0


class Views:
    """Discovery and lookup for every directory a source has been asked about."""

    def __init__(
        self,
        manager: McpManager,
        *,
        servers: Sequence[object] | None,
        include_config: bool,
        disabled: bool | None,
        cache_ttl_s: float,
    ) -> None:
        self.manager = manager
        self._servers = servers
        self._include_config = include_config
        self._disabled = disabled
        self.cache_ttl_s = cache_ttl_s
        self._views: OrderedDict[Path, View] = OrderedDict()
        # Every name any live view offers -> its spec, newest catalogue winning; the fast path
        # for calls that name no directory.
        self._latest: dict[str, ToolSpec] = {}
        #: Pinning's verdict on each handle's listing: key -> (listing version, review).
        self._reviews: dict[str, tuple[tuple[int, int | None], pinning.Review]] = {}

    def view(self, cwd: Path) -> View:
        """The (possibly new) view for ``cwd``; reloads config when its sources changed."""
        fp = resolve.fingerprint(cwd, self._servers, include_config=self._include_config)
        view = self._views.get(cwd)
        if view is None or view.fingerprint != fp:
            config = resolve.load(
                cwd,
                servers=self._servers,
                include_config=self._include_config,
                disabled=self._disabled,
            )
            handles = [self.manager.ensure(cfg) for cfg in config.active()]
            view = View(cwd=cwd, config=config, fingerprint=fp, handles=handles)
            self._views[cwd] = view
            while len(self._views) > MAX_VIEWS:
                self._views.popitem(last=False)
            self._retire_unused()
            self._reindex()
        self._views.move_to_end(cwd)
        return view

    def discovered(self, cwd: Path) -> View | None:
        """``cwd``'s view once a discovery has built its catalogue (no I/O)."""
        view = self._views.get(cwd)
        return view if view is not None and view.versions is not None else None

    def conflicts(self, cwd: Path) -> list[dict[str, Any]]:
        """Naming conflicts of ``cwd``'s last catalogue (no I/O, safe from any thread)."""
        view = self._views.get(cwd)
        return [c.to_dict() for c in view.conflicts] if view is not None else []

    def views(self) -> list[View]:
        """Every live view, most recently used last."""
        return list(self._views.values())

    async def discover(
        self,
        cwd: Path,
        *,
        force: bool = False,
        progress: ProgressFn | None = None,
        only: Collection[str] | None = None,
    ) -> View:
        """Bring the view up to date: connect new servers, refresh when the cache expired.

        ``only`` (server names) limits the work to those servers; the others are neither
        started nor waited for, so one stuck server cannot delay a request for another.
        """
        view = self.view(cwd)
        if only is not None:
            chosen = [h for h in view.handles if h.name in only]
            await self.manager.refresh(chosen, force=force, progress=progress)
            self._rebuild(view)
            return view
        now = anyio.current_time()
        expired = view.refreshed_at is None or now - view.refreshed_at >= self.cache_ttl_s
        if force or expired:
            await self.manager.refresh(view.handles, force=force, max_age_s=self.cache_ttl_s)
            if progress is not None and not view.handles:
                progress(0, 0)
            view.refreshed_at = anyio.current_time()
        else:
            await self.manager.refresh([h for h in view.handles if h.stale])
        self._rebuild(view)
        return view

    async def refresh_expired(self) -> None:
        """One periodic tick: refresh every view whose cache has expired."""
        now = anyio.current_time()
        for view in self.views():
            if view.refreshed_at is not None and now - view.refreshed_at >= self.cache_ttl_s:
                await self.discover(view.cwd)

    def find(self, name: str, cwd: Path | None) -> ToolSpec | None:
        """The spec called ``name`` in ``cwd``'s view, else in the newest catalogue naming it."""
        if cwd is not None:
            view = self._views.get(cwd)
            spec = view.by_name.get(name) if view is not None else None
            if spec is not None:
                return spec
        return self._latest.get(name)

    @staticmethod
    def owners(view: View, name: str) -> list[str]:
        """The servers of ``view`` whose tools ``name`` could be (``mcp_<server>_...``)."""
        return [h.name for h in view.handles if name.startswith(f"mcp_{h.name}_")]

    def unknown(self, name: str, cwd: Path | None) -> McpToolError:
        """The error for a name no view knows, with the closest names as a hint."""
        for view in self.views():
            for h in view.handles:
                if name.startswith(f"mcp_{h.name}_") and not h.connected:
                    reason = h.last_error or "not connected yet"
                    return McpToolError(
                        f"unknown MCP tool {name!r}: server {h.name!r} is down ({reason})",
                        hint="`lemon mcp status` shows why; the next call tries to connect again",
                    )
                held = self._held(h, name)
                if held is not None:
                    return held
        names = sorted({n for v in self.views() for n in v.by_name})
        close = difflib.get_close_matches(name, names, n=3)
        here = self._views.get(cwd) if cwd is not None else None
        if close:
            hint = "did you mean " + ", ".join(close) + "?"
        elif here is not None and here.handles and not self.owners(here, name):
            servers = ", ".join(h.name for h in here.handles)
            hint = f"MCP tool names are mcp_<server>_<tool>; the servers here are: {servers}"
        else:
            hint = "run `lemon mcp tools` to see the tools that are available"
        where = f" in {cwd}" if cwd else ""
        return McpToolError(f"unknown MCP tool {name!r}{where}", hint=hint)

    async def resolve(self, name: str, cwd: Path) -> ToolSpec:
        """The spec called ``name`` in ``cwd``, listing the servers it could belong to first
        when the last catalogue does not know it.

        Raises:
            McpToolError: MCP is off in ``cwd``, or no server of ``cwd`` offers ``name``.
        """
        spec = self.find(name, cwd)
        if spec is None:
            view = self.view(cwd)
            if not view.config.enabled:
                raise McpToolError(
                    f"cannot call {name!r}: MCP is off here ({view.config.disabled_reason})"
                )
            owners = self.owners(view, name)
            if owners:
                await self.discover(cwd, only=owners)
                spec = self.find(name, cwd)
        if spec is None:
            raise self.unknown(name, cwd)
        return spec

    def _rebuild(self, view: View) -> None:
        versions = tuple(h.version for h in view.handles)
        if versions == view.versions:
            return
        # The view's config, not the handle's: a handle is shared by entries that differ only
        # in what they pin.
        pins = {cfg.name: cfg.always_load for cfg in view.config.active()}
        entries = [
            CatalogEntry(
                server=h.name,
                key=h.key,
                filters=h.config.filters,
                listing=h.listing,
                always_load=pins.get(h.name, h.config.always_load),
                withheld=self._withheld(h),
                policy=h.config.policy,
            )
            for h in view.handles
        ]
        view.instructions = {h.name: h.instructions for h in view.handles if h.instructions}
        view.specs, view.conflicts = build(entries)
        view.search = {}
        view.by_name = {s.name: s for s in view.specs}
        view.versions = versions
        view.generation = next(_generations)
        self._reindex()

    def _held(self, h: ServerHandle, name: str) -> McpToolError | None:
        """The error for a call to a tool pinning holds back, with the way to release it."""
        prefix = f"mcp_{h.name}_"
        if not name.startswith(prefix):
            return None
        target = name[len(prefix) :]
        reason = self.review(h).held.get(target)
        if reason is None:
            return None
        with otel.span("lemon.mcp.call", {"lemon.server": h.name, "lemon.pin.held": True}):
            return McpToolError(
                f"MCP tool {target!r} is held for review: {reason}",
                server=h.name,
                hint=f"check it, then `lemon mcp approve-changes {h.name}`",
            )

    def review(self, h: ServerHandle) -> pinning.Review:
        """Pinning's verdict on ``h``'s current listing (checked once per listing)."""
        if h.config.policy.pinning == "off" or not h.listing.tools:
            return pinning.Review()
        try:
            # On a shared database another machine may approve or pin meanwhile.
            stamp = (h.version, pinning.generation(h.name))
            hit = self._reviews.get(h.key)
            if hit is not None and hit[0] == stamp:
                return hit[1]
            verdict = pinning.review(h.name, h.listing.tools)
        except LemonSkillsError as exc:  # unreadable pins hold this server's tools back
            return pinning.Review({"*": f"pins unreadable: {exc}"})
        self._reviews[h.key] = ((h.version, pinning.generation(h.name)), verdict)
        return verdict

    def approve_changes(self, h: ServerHandle) -> list[str]:
        """Pin ``h``'s tools as listed now and rebuild the catalogues that show them."""
        changed = pinning.approve(h.name, h.listing.tools)
        self._reviews.pop(h.key, None)
        for view in self._views.values():
            if h in view.handles:
                view.versions = None
                self._rebuild(view)
        return changed

    def _withheld(self, h: ServerHandle) -> frozenset[str]:
        if h.config.policy.pinning != "withhold":
            return frozenset()
        return frozenset(self.review(h).held)

    def _reindex(self) -> None:
        latest: dict[str, ToolSpec] = {}
        for view in sorted(self._views.values(), key=lambda v: v.generation):
            latest.update(view.by_name)
        self._latest = latest

    def _retire_unused(self) -> None:
        used = {h.key for v in self._views.values() for h in v.handles}
        for key in list(self.manager.handles):
            if key not in used:
                self.manager.retire(key)
