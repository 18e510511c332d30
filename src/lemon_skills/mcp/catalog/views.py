"""The async engine behind ``McpSource``: per-directory views over one ``McpManager``.

A view is what one working directory sees: its resolved config, the handles of its servers
and the catalogue built from their listings. Views share handles, so a server configured
globally is one connection however many projects use it; a project server is bound to its
project's view, and every tool spec names its handle directly, so calling a project tool never
depends on which directory the call comes from.
"""

from __future__ import annotations

import difflib
import itertools
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError

from lemon_skills import state
from lemon_skills.errors import LemonSkillsError, McpToolError
from lemon_skills.mcp.catalog import pinning
from lemon_skills.mcp.catalog.build import CatalogEntry, ToolSpec, build
from lemon_skills.mcp.catalog.filters import prompt_allowed, resource_allowed
from lemon_skills.mcp.catalog.naming import NameConflict
from lemon_skills.mcp.config import resolve
from lemon_skills.mcp.output.results import (
    json_result,
    prompt_dict,
    prompt_result,
    read_result,
    resource_dict,
    template_dict,
    tool_result,
)
from lemon_skills.mcp.output.spill import over_budget, spill
from lemon_skills.mcp.session.deadline import OnProgressFn
from lemon_skills.mcp.session.handle import ServerHandle
from lemon_skills.mcp.session.logs import redact
from lemon_skills.mcp.session.manager import McpManager, ProgressFn
from lemon_skills.mcp.skills.client import CacheHint, WireSkill, list_skills_hinted, read_bytes
from lemon_skills.telemetry import otel
from lemon_skills.tool import ToolResult

#: Decides one tool call that needs approval: True, or why not (a sentence).
Approver = Callable[[dict[str, Any]], Awaitable["bool | str"]]
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


class SourceCore:
    """Discovery, calls and status for every directory a source has been asked about."""

    def __init__(
        self,
        manager: McpManager,
        *,
        servers: Sequence[object] | None,
        include_config: bool,
        disabled: bool | None,
        cache_ttl_s: float,
        approver: Approver | None = None,
    ) -> None:
        self.manager = manager
        self.approver = approver
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

    async def invoke(
        self,
        spec: ToolSpec,
        params: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: OnProgressFn | None = None,
        approved: bool = False,
    ) -> ToolResult:
        """Run a tool or utility on its server.

        ``timeout`` (seconds) replaces the entry's ``timeout_ms`` for a tool call; progress
        the server reports goes to ``on_progress(progress, total, message)`` and pushes the
        deadline back (up to ``max_total_timeout_ms``). ``approved``: the host has already
        had this call approved in its own human-in-the-loop, so the approver is not asked.

        Raises:
            McpToolError: server gone or down, timeout, protocol error, filtered item.
        """
        h = self.manager.handles.get(spec.key)
        if h is None:
            raise McpToolError(
                "no longer configured", server=spec.server, hint="rediscover the tools"
            )
        args = params if isinstance(params, dict) else dict(params)
        if spec.kind == "tool":
            if not otel.active():
                return await self._call(h, spec, args, timeout, on_progress, otel.QUIET, approved)
            with otel.span("lemon.mcp.call", _call_attributes(spec)) as current:
                started = time.perf_counter()
                out = await self._call(h, spec, args, timeout, on_progress, current, approved)
                elapsed = time.perf_counter() - started
            otel.record("lemon.mcp.call.duration", elapsed, {"lemon.server": spec.server})
            return out
        if spec.kind == "resources_list":
            return json_result(await self.resources(h), server=spec.server)
        if spec.kind == "resource_read":
            return await self._read(h, spec.server, _text_param(args, "uri"))
        if spec.kind == "prompts_list":
            return json_result(await self.prompts(h), server=spec.server)
        return await self._prompt(h, spec.server, _text_param(args, "name"), args)

    async def _call(
        self,
        h: ServerHandle,
        spec: ToolSpec,
        args: dict[str, Any],
        timeout: float | None,
        on_progress: OnProgressFn | None,
        current: Any,
        approved: bool,
    ) -> ToolResult:
        if h.config.policy.pinning == "withhold" and state.database() is not None:
            self._refuse_held(h, spec, current)
        if spec.approve and approved:
            # Approved in the host's own human-in-the-loop before the call was made.
            decided = {"lemon.approval.asked": True, "lemon.approval.decision": "approved"}
            otel.set_attributes(current, decided)
        elif spec.approve:
            otel.set_attributes(current, {"lemon.approval.asked": True})
            try:
                await self._approved(spec, args)
            except McpToolError:
                otel.set_attributes(current, {"lemon.approval.decision": "denied"})
                raise
            otel.set_attributes(current, {"lemon.approval.decision": "approved"})
        deadline = self.manager.deadline(h.config, timeout, on_progress=on_progress)

        def call(c: Client) -> Awaitable[Any]:  # the SDK's coroutine: no frame between
            return c.call_tool(spec.target, args, progress_callback=deadline.progress)

        what = f"tool {spec.target!r}"
        result = await self.manager.request(h, call, what=what, deadline=deadline, resend=False)
        out = tool_result(result, server=spec.server, tool=spec.target)
        budget = h.config.policy.max_result_tokens
        spilled = over_budget(out, budget)
        otel.set_attributes(current, {"lemon.result.spilled": spilled, "error": out.is_error})
        return spill(out, budget) if spilled else out

    def _refuse_held(self, h: ServerHandle, spec: ToolSpec, current: Any) -> None:
        """On a shared database a tool may be held (or released) by another machine after this
        catalogue was built: check the pins' generation before every call."""
        held = self.review(h).held
        reason = held.get(spec.target) or held.get("*")
        otel.set_attributes(current, {"lemon.pin.held": reason is not None})
        if reason is not None:
            raise McpToolError(
                f"tool {spec.target!r} is held for review: {reason}",
                server=spec.server,
                hint=f"`lemon mcp approve-changes {spec.server}` once the change is trusted",
            )

    async def _approved(self, spec: ToolSpec, args: Mapping[str, Any]) -> None:
        if self.approver is None:
            raise McpToolError(
                f"{spec.name} needs approval and no approver is set", server=spec.server
            )
        request: dict[str, Any] = {"server": spec.server, "tool": spec.target}
        request.update(name=spec.name, arguments=dict(args))
        verdict = await self.approver(request)
        if verdict is not True:
            why = verdict if isinstance(verdict, str) else "not approved"
            raise McpToolError(
                f"call to {spec.target!r} was not run: {why}",
                server=spec.server,
                hint="its server's approve policy asks an operator (`lemon approvals`)",
            )

    async def resources(self, h: ServerHandle) -> list[dict[str, Any]]:
        """The server's resources and templates that pass its filters (live listing)."""

        async def fetch(c: Any) -> tuple[Any, list[Any]]:
            listed = await c.list_resources()
            try:
                templates = (await c.list_resource_templates()).resource_templates
            except MCPError:  # templates are optional; a server may not implement the method
                templates = []
            return listed, templates

        listed, templates = await self.manager.request(h, fetch, what="resources/list")
        f = h.config.filters
        out = [resource_dict(r) for r in listed.resources if resource_allowed(f, r.uri, r.name)]
        out += [template_dict(t) for t in templates if resource_allowed(f, t.uri_template, t.name)]
        return out

    async def skills(
        self, h: ServerHandle, limit: int
    ) -> tuple[list[WireSkill], list[str], CacheHint]:
        """The skills the server lists (SEP-2640), metadata only, and its cache hints."""

        async def fetch(c: Any) -> tuple[list[WireSkill], list[str], CacheHint]:
            return await list_skills_hinted(c.session, limit=limit)

        return await self.manager.request(h, fetch, what="skills/list")

    async def read_bytes(self, h: ServerHandle, uri: str, limit: int) -> bytes:
        """One resource of the server as bytes (at most ``limit``)."""

        async def read(c: Any) -> bytes:
            return await read_bytes(c.session, uri, limit)

        return await self.manager.request(h, read, what=f"resource {uri!r}")

    async def prompts(self, h: ServerHandle) -> list[dict[str, Any]]:
        """The server's prompts that pass its filters (live listing)."""

        async def fetch(c: Any) -> Any:
            return await c.list_prompts()

        listed = await self.manager.request(h, fetch, what="prompts/list")
        f = h.config.filters
        return [prompt_dict(p) for p in listed.prompts if prompt_allowed(f, p.name)]

    async def _read(self, h: ServerHandle, server: str, uri: str) -> ToolResult:
        name = await self._resource_name(h, uri)
        if not resource_allowed(h.config.filters, uri, name):
            raise McpToolError(
                f"resource {uri!r} is blocked by the server's filters", server=server
            )

        async def read(c: Any) -> Any:
            return await c.read_resource(uri)

        result = await self.manager.request(h, read, what=f"resource {uri!r}")
        out = read_result(result, server=server, uri=uri)
        budget = h.config.policy.max_result_tokens
        return spill(out, budget) if over_budget(out, budget) else out

    async def _resource_name(self, h: ServerHandle, uri: str) -> str | None:
        for r in h.listing.resources:
            if r.uri == uri:
                return r.name
        f = h.config.filters
        if not f.allow_resources and not f.block_resources:
            return None
        listed = await self.resources(h)
        return next((r["name"] for r in listed if r.get("uri") == uri), None)

    async def _prompt(
        self, h: ServerHandle, server: str, name: str, args: dict[str, Any]
    ) -> ToolResult:
        if not prompt_allowed(h.config.filters, name):
            raise McpToolError(f"prompt {name!r} is blocked by the server's filters", server=server)
        arguments = args.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise McpToolError("arguments must be an object", server=server)
        values = {str(k): v if isinstance(v, str) else _json(v) for k, v in arguments.items()}

        async def get(c: Any) -> Any:
            return await c.get_prompt(name, values)

        result = await self.manager.request(h, get, what=f"prompt {name!r}")
        return prompt_result(result, server=server, name=name)

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

    def status(self, cwd: Path) -> dict[str, Any]:
        """The status dict of ``cwd``'s view (no I/O)."""
        view = self.view(cwd)
        cfg = view.config
        now = anyio.current_time()
        servers: dict[str, Any] = {}
        for h in view.handles:
            snap = h.snapshot(now=now)
            f = h.config.filters
            lst = h.listing
            snap["tool_count"] = sum(1 for s in view.specs if s.key == h.key)
            snap["resource_count"] = sum(
                1 for r in lst.resources if resource_allowed(f, r.uri, r.name)
            ) + sum(1 for t in lst.templates if resource_allowed(f, t.uri_template, t.name))
            snap["prompt_count"] = sum(1 for p in lst.prompts if prompt_allowed(f, p.name))
            snap["policy"] = h.config.policy.to_dict()
            snap["held_tools"] = self.review(h).to_list()
            servers[h.name] = snap
        for s in cfg.servers:
            if (not s.enabled or not s.trusted) and s.name:
                servers.setdefault(s.name, _disabled_entry(s, cfg.state_of(s)))
        skipped = cfg.untrusted_notice()
        return {
            "untrusted_project": (
                cfg.trust.to_dict() | {"notice": skipped} if cfg.trust and skipped else None
            ),
            "disabled": not cfg.enabled,
            "disabled_reason": cfg.disabled_reason,
            "servers": servers if cfg.enabled else {},
            "cached_tools": len(view.specs) if cfg.enabled else 0,
            "cache_ttl_ms": round(self.cache_ttl_s * 1000),
            "config_errors": [i.to_dict() for i in cfg.issues],
            "conflicts": [c.to_dict() for c in view.conflicts],
        }


def _disabled_entry(cfg: Any, state: str) -> dict[str, Any]:
    return {
        "connected": False,
        "state": state,
        "transport": cfg.transport,
        "origin": cfg.origin,
        "target": redact(cfg.target),
        "tool_count": 0,
        "resource_count": 0,
        "prompt_count": 0,
        "capabilities": {},
        "last_error": None,
    }


def _text_param(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise McpToolError(f"missing parameter {key!r}")
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _call_attributes(spec: ToolSpec) -> dict[str, Any]:
    return {
        "lemon.server": spec.server,
        "gen_ai.tool.name": spec.target,
        "lemon.tool": spec.name,
        "lemon.approval.asked": False,
        "lemon.pin.held": False,
    }
