"""``McpSource``: MCP servers as agent tools, for synchronous and asynchronous hosts.

``async with McpSource(...) as source:`` runs the sessions in the caller's event loop (use the
``a``-prefixed methods); ``source = McpSource(...)`` then ``source.discover_tools()`` runs them
on a private loop driven by the calling thread during each call, closed by ``close()`` or at
exit (``session/runtime.py`` says how). Tool objects returned by ``discover_tools`` are bound
to the server that listed them, so a project server's tool stays callable whatever directory
the call comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from lemon_skills import settings as settings_mod
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.context import current
from lemon_skills.mcp.catalog.build import ToolSpec
from lemon_skills.mcp.catalog.calls import SourceCore
from lemon_skills.mcp.catalog.views import View
from lemon_skills.mcp.output.report import ListingKind, Report, directory_report
from lemon_skills.mcp.output.status import directory_status
from lemon_skills.mcp.sampling.handler import DelegateFn
from lemon_skills.mcp.session.deadline import OnProgressFn
from lemon_skills.mcp.session.factories import HostDecision, call_approver, oauth_factory
from lemon_skills.mcp.session.factories import sampling_factory as default_sampling
from lemon_skills.mcp.session.lifecycle import (
    AuthFactory,
    ElicitationFactory,
    ProgressFn,
    SamplingFactory,
    TransportFactory,
)
from lemon_skills.mcp.session.manager import McpManager
from lemon_skills.mcp.session.runtime import Runtime
from lemon_skills.mcp.skills import served
from lemon_skills.paths import PathArg, resolve_cwd
from lemon_skills.tool import Tool, ToolResult


class McpSource:
    """Tools, resources and prompts of the configured MCP servers.

    Args:
        servers: entries to use instead of ``lemon_skills.configure(mcp_servers=...)``.
        cwd: default directory for project config (``<cwd>/.lemon/mcp.json``).
        include_config: read ``LEMON_MCP_SERVERS`` and the mcp.json files (default true).
        disabled: force MCP off (true) or on (false) regardless of config switches.
        cache_ttl_ms / refresh_interval_ms: tool cache lifetime (5 min) and how often the
            periodic refresh looks for expired caches (1 min); default from ``configure()``.
        sampling_delegate: the host's model call for servers whose ``sampling`` policy is
            ``model`` or ``reviewed_model``: ``delegate(params, summary)`` returns a
            ``CreateMessageResult`` (or its dict); without one such requests are refused.
        approvals: the approvals store that OAuth logins (``mcp_<server>_oauth``) and
            ``ops_approval`` sampling reviews (``mcp_<server>_sampling``) wait in; default
            the agent dir's.
        approve_call: the host's decision on a tool call that its server's ``approve`` policy
            sends for approval: ``approve_call({"server", "tool", "name", "arguments"})``
            returns True to run it (may be a coroutine function). Without it, such calls wait
            in ``approvals`` for an operator (``lemon approvals approve ID``).
        auth_factory / sampling_factory / elicitation_factory: per-server ``httpx2.Auth``,
            sampling and elicitation callbacks, replacing the defaults (which build auth from
            an entry's ``oauth`` and sampling from its ``sampling``; see ``factories.py``).
        transport_factory: per-server transport replacing the entry's own, or ``None`` to
            keep it: e.g. the SDK's ``InMemoryTransport(server)`` for a server running in this
            process; default from ``configure(mcp_transport_factory=...)``.
    """

    def __init__(
        self,
        servers: Sequence[object] | None = None,
        *,
        cwd: PathArg = None,
        include_config: bool = True,
        disabled: bool | None = None,
        cache_ttl_ms: int | None = None,
        refresh_interval_ms: int | None = None,
        sampling_delegate: DelegateFn | None = None,
        approvals: ApprovalStore | None = None,
        auth_factory: AuthFactory | None = None,
        sampling_factory: SamplingFactory | None = None,
        elicitation_factory: ElicitationFactory | None = None,
        transport_factory: TransportFactory | None = None,
        approve_call: HostDecision | None = None,
    ) -> None:
        settings = settings_mod.settings()
        self._servers = list(servers) if servers is not None else None
        self._cwd = Path(cwd).absolute() if cwd is not None else None
        self._include_config = include_config
        self._disabled = disabled
        self.cache_ttl_ms = cache_ttl_ms or settings.mcp_cache_ttl_ms
        self.refresh_interval_ms = refresh_interval_ms or settings.mcp_refresh_interval_ms
        factories = {
            "auth_factory": auth_factory or oauth_factory(approvals=approvals),
            "sampling_factory": sampling_factory
            or default_sampling(delegate=sampling_delegate, approvals=approvals),
            "elicitation_factory": elicitation_factory,
            "transport_factory": transport_factory or settings.mcp_transport_factory,
        }
        self._approver = call_approver(approvals=approvals, decide=approve_call)
        self._rt = Runtime(self._new_core, factories, self.refresh_interval_ms / 1000)
        #: The servers' skills (SEP-2640) for the skills layer, which verifies what they serve.
        self.skills = served.ServedSkills(
            self._rt, self._dir, self._servers, include_config=include_config, disabled=disabled
        )

    # -- async API ---------------------------------------------------------------------

    async def __aenter__(self) -> McpSource:
        await self._rt.enter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._rt.exit(exc_type, exc, tb)

    async def adiscover_tools(
        self,
        cwd: PathArg = None,
        *,
        force_refresh: bool = False,
        progress: ProgressFn | None = None,
    ) -> list[Tool]:
        """The tools of every server that applies in ``cwd``, sorted by name.

        Servers are connected concurrently on first use; one that fails or hangs only loses
        its own tools (see ``status()``). The result is cached for ``cache_ttl_ms``.
        """
        where = self._dir(cwd)
        return await self._rt.arun(lambda: self._discover(where, force_refresh, progress))

    async def acall_tool(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        cwd: PathArg = None,
        timeout: float | None = None,
        on_progress: OnProgressFn | None = None,
        approved: bool = False,
    ) -> ToolResult:
        """Call a tool by its model-facing name (``mcp_<server>_<tool>``).

        Only the server the name belongs to is started, if it is not running yet.
        ``timeout`` (seconds) replaces the entry's ``timeout_ms`` for this call; every
        progress notification restarts it, up to the entry's ``max_total_timeout_ms``, and
        is passed to ``on_progress(progress, total, message)`` (a function or coroutine
        function). ``approved``: a call ``needs_approval`` flags was approved in the host's
        own human-in-the-loop, so ``approve_call`` and the approvals store are not asked.
        Returns the server's result (``is_error`` set when the tool reported a failure).

        Raises:
            McpToolError: unknown name, server down, timeout, protocol error, or the
                connection broke while the call was in flight (it is never sent twice).
        """
        args = dict(params) if params else {}
        core = self._rt.core
        if core is not None and cwd is None and self._rt.in_owner_loop():
            # The hot path of an agent loop inside `async with`: no thread hop, no path work.
            spec = core.find(name, None)
            if spec is not None:
                return await core.invoke(
                    spec, args, timeout=timeout, on_progress=on_progress, approved=approved
                )
        where = self._dir(cwd)
        return await self._rt.arun(
            lambda: self._rt.need_core().call(name, args, where, timeout, on_progress, approved)
        )

    def needs_approval(self, name: str, cwd: PathArg = None) -> bool | None:
        """Whether a call to ``name`` waits for approval (its server's ``approve`` policy,
        ``approve_tools`` and the tool's annotations), or None when the last discovery of
        ``cwd`` has no such tool. No I/O and no waiting: a host that pauses its run its own way
        asks this first, then calls ``acall_tool(..., approved=True)`` once approved."""
        view = self.catalogue(cwd)
        spec = None if view is None else view.by_name.get(name)
        return None if spec is None else spec.approve

    async def arefresh(self, cwd: PathArg = None) -> None:
        """Re-list every server of ``cwd`` now and reconnect the ones that are down."""
        where = self._dir(cwd)
        await self._rt.arun(lambda: self._discover(where, True, None))

    async def astatus(self, cwd: PathArg = None) -> dict[str, Any]:
        """``status()`` from async code."""
        where = self._dir(cwd)
        return await self._rt.arun(lambda: self._status(where))

    async def aresources(
        self, cwd: PathArg = None, *, server: str | None = None
    ) -> list[dict[str, Any]]:
        """Every allowed resource (with its ``server``) of the servers of ``cwd`` that answer
        (``areport("resources")`` also says which did not).

        Raises:
            McpError: ``server`` names no configured server.
        """
        return list((await self.areport("resources", cwd, server=server)).rows)

    async def aprompts(
        self, cwd: PathArg = None, *, server: str | None = None
    ) -> list[dict[str, Any]]:
        """Every allowed prompt (with its ``server``) of the servers of ``cwd`` that answer
        (``areport("prompts")`` also says which did not).

        Raises:
            McpError: ``server`` names no configured server.
        """
        return list((await self.areport("prompts", cwd, server=server)).rows)

    async def areport(
        self,
        kind: ListingKind,
        cwd: PathArg = None,
        *,
        server: str | None = None,
        progress: ProgressFn | None = None,
    ) -> Report:
        """The ``tools`` (``ToolSpec.to_dict()`` rows), ``resources`` or ``prompts`` of the
        servers of ``cwd`` (or only ``server``), with a ``ServerProblem`` for every server that
        could not contribute: failed to start, disconnected, or refused the listing.

        Raises:
            McpError: ``server`` names no configured server (the hint names the known ones).
        """
        where = self._dir(cwd)
        return await self._rt.arun(
            lambda: directory_report(
                self._rt.need_core(), where, kind, server, progress, refresh=not self._rt.owned
            )
        )

    # -- sync API ----------------------------------------------------------------------

    def discover_tools(
        self,
        cwd: PathArg = None,
        *,
        force_refresh: bool = False,
        progress: ProgressFn | None = None,
    ) -> list[Tool]:
        """Synchronous ``adiscover_tools``."""
        where = self._dir(cwd)
        return self._rt.run(lambda: self._discover(where, force_refresh, progress))

    def call_tool(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        cwd: PathArg = None,
        timeout: float | None = None,
        on_progress: OnProgressFn | None = None,
    ) -> ToolResult:
        """Synchronous ``acall_tool``."""
        args = dict(params) if params else {}
        core, sync = self._rt.core, self._rt.sync
        if core is not None and sync is not None and cwd is None and not self._rt.owned:
            spec = core.find(name, None)
            if spec is not None:
                return sync.run(
                    lambda: core.invoke(spec, args, timeout=timeout, on_progress=on_progress)
                )
        where = self._dir(cwd)
        return self._rt.run(
            lambda: self._rt.need_core().call(name, args, where, timeout, on_progress, False)
        )

    def get_tool(self, name: str, cwd: PathArg = None) -> Tool | None:
        """The tool called ``name`` among ``discover_tools(cwd)``, if any."""
        return next((t for t in self.discover_tools(cwd) if t.name == name), None)

    def refresh(self, cwd: PathArg = None) -> None:
        """Synchronous ``arefresh``."""
        where = self._dir(cwd)
        self._rt.run(lambda: self._discover(where, True, None))

    def status(self, cwd: PathArg = None) -> dict[str, Any]:
        """``{"disabled", "servers": {name: {...}}, "cached_tools", "cache_ttl_ms", ...}``.

        Reports without connecting: servers not tried yet show ``state: "pending"``.
        """
        where = self._dir(cwd)
        return self._rt.run(lambda: self._status(where))

    def resources(self, cwd: PathArg = None, *, server: str | None = None) -> list[dict[str, Any]]:
        """Synchronous ``aresources``."""
        return list(self.report("resources", cwd, server=server).rows)

    def prompts(self, cwd: PathArg = None, *, server: str | None = None) -> list[dict[str, Any]]:
        """Synchronous ``aprompts``."""
        return list(self.report("prompts", cwd, server=server).rows)

    def report(
        self,
        kind: ListingKind,
        cwd: PathArg = None,
        *,
        server: str | None = None,
        progress: ProgressFn | None = None,
    ) -> Report:
        """Synchronous ``areport``."""
        where = self._dir(cwd)
        return self._rt.run(
            lambda: directory_report(
                self._rt.need_core(), where, kind, server, progress, refresh=not self._rt.owned
            )
        )

    def tool_specs(self, cwd: PathArg = None) -> list[ToolSpec]:
        """The catalogue behind the last discovery of ``cwd`` (for listings)."""
        where = self._dir(cwd)
        return self._rt.run(lambda: self._specs(where))

    def catalogue(self, cwd: PathArg = None) -> View | None:
        """The catalogue of the last discovery for ``cwd`` (specs, server instructions and its
        ``generation``), or None before the first; no I/O, so it starts no server."""
        core = self._rt.core
        return core.discovered(self._dir(cwd)) if core is not None else None

    def naming_conflicts(self, cwd: PathArg = None) -> list[dict[str, Any]]:
        """Tool names that several MCP tools wanted in ``cwd`` and how each was resolved
        (from the last discovery; no I/O)."""
        core = self._rt.core
        return core.conflicts(self._dir(cwd)) if core is not None else []

    def approve_changes(self, server: str, cwd: PathArg = None) -> list[str]:
        """Accept ``server``'s tools as it lists them now (pinning): tools withheld because
        they changed since pinned, or because their description hides instructions, are
        offered again. Returns the tools whose pin changed.

        Raises:
            McpError: ``server`` names no configured server, or it cannot be reached.
        """
        where = self._dir(cwd)
        return self._rt.run(lambda: self._rt.need_core().approve_server(where, server))

    def close(self) -> None:
        """Stop every server and release the loop (idempotent)."""
        self._rt.close()

    def __enter__(self) -> McpSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _dir(self, cwd: PathArg) -> Path:
        return resolve_cwd(cwd) if cwd is not None else (self._cwd or Path.cwd())

    def _new_core(self, manager: McpManager) -> SourceCore:
        return SourceCore(
            manager,
            servers=self._servers,
            include_config=self._include_config,
            disabled=self._disabled,
            cache_ttl_s=self.cache_ttl_ms / 1000,
            approver=self._approver,
        )

    async def _discover(self, where: Path, force: bool, progress: ProgressFn | None) -> list[Tool]:
        core = self._rt.need_core()
        if not self._rt.owned:
            await core.refresh_expired()
        view = await core.discover(where, force=force, progress=progress)
        return self._rt.tools(view)

    async def _status(self, where: Path) -> dict[str, Any]:
        out = directory_status(self._rt.need_core(), where)
        out["refresh_interval_ms"] = self.refresh_interval_ms
        return out

    async def _specs(self, where: Path) -> list[ToolSpec]:
        core = self._rt.need_core()
        return list((await core.discover(where)).specs)


def default_source() -> McpSource:
    """The default context's source (config from ``configure()``, env and files)."""
    return current().service(McpSource, McpSource)


def reset_default_source() -> None:
    """Close the default context's source; the next ``default_source()`` starts afresh."""
    current().discard(McpSource)
