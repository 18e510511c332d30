"""The gateway's MCP server: one low-level SDK ``Server`` whose handlers route to the skills
server of ``lemon mcp serve`` (the same handlers, called as they are) and to the upstream
servers through one ``McpSource`` (its async API, inside the gateway's event loop).
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import LemonSkillsError, McpInputRequired
from lemon_skills.gateway import catalog, held, results
from lemon_skills.gateway.clients import Calling, Client, Clients, calling
from lemon_skills.gateway.held import DEFAULT_TIMEOUT_S, HeldCalls
from lemon_skills.gateway.items import Items, say
from lemon_skills.gateway.policy import Approver, Forwarder, Inflight
from lemon_skills.gateway.replicas import Secret, relay_pin_changes
from lemon_skills.gateway.upstreams import Upstreams
from lemon_skills.gateway.wire import ListingFastPath
from lemon_skills.mcp.output.spill import read_result_tool
from lemon_skills.mcp.source import McpSource
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.selection import profiles
from lemon_skills.tool import ToolContext, validate_params
from lemon_skills.tools.deferred import TOOL_SEARCH, Mode, tool_search_tool
from lemon_skills.tools.serve.server import EXTENSION, Options, SkillServer
from lemon_skills.version import __version__

INVALID_PARAMS = -32602
#: One upstream tool a client lists: the listing it belongs to and its name.
Row = tuple[catalog.Listing, str]
#: How often upstream ``list_changed`` news is looked for and passed on.
WATCH_INTERVAL_S = 0.5


@dataclass
class GatewayOptions:
    cwd: Path
    agent: str | None = None
    tools: Mode = "auto"
    budget: int = catalog.DEFAULT_BUDGET
    approvals: ApprovalStore | None = None
    servers: list[object] | None = field(default=None)
    #: Shared by every replica of one deployment (``lemon_skills.gateway.replicas``).
    secret: Secret | None = None
    #: How long a 2026-07-28 host has to answer an upstream's request (then it is cancelled).
    answer_timeout_s: float = DEFAULT_TIMEOUT_S


class Gateway:
    """Build with options, then ``async with gateway.running(): ...`` and serve
    ``gateway.server`` on any transport."""

    def __init__(self, options: GatewayOptions, clients: Clients | None = None) -> None:
        self.options = options
        self.clients = clients or Clients(agent=options.agent)
        self.inflight = Inflight()
        self.held = HeldCalls(options.answer_timeout_s)
        forward = Forwarder(self.inflight, self.held)
        approver = Approver(options.approvals)

        def make(servers: list[Any] | None, include_config: bool) -> McpSource:
            return McpSource(
                servers,
                cwd=options.cwd,
                include_config=include_config,
                approve_call=approver,
                elicitation_factory=forward.elicitation,
                sampling_delegate=forward.sampling,
                approvals=options.approvals,
            )

        self.upstreams = Upstreams(options.cwd, options.servers, make)
        self.source = self.upstreams.shared
        self.items = Items(self)
        self.skills = SkillServer(Options(cwd=options.cwd, agent=options.agent))
        #: Skill servers and listings of agents bound by a token (``TOKEN AGENT``).
        self._agents: dict[str | None, SkillServer] = {options.agent: self.skills}
        self._listings: dict[str | None, catalog.Listing] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self.server = self._build()

    # -- lifecycle ----------------------------------------------------------------------

    async def run(self, serve: Callable[[], Awaitable[None]]) -> None:
        """Run ``serve()`` with the upstream servers up and the watchers going."""
        async with self.source, anyio.create_task_group() as tg:
            self._tg = self.upstreams.tg = tg
            tg.start_soon(self.skills.watch)
            tg.start_soon(self._watch)
            tg.start_soon(relay_pin_changes, self.clients)
            await serve()
            tg.cancel_scope.cancel()

    def init_options(self) -> Any:
        return self.server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
            {EXTENSION: {}},
        )

    def _build(self) -> Server[Any]:
        srv: Server[Any] = Server(
            "lemon-gateway",
            version=__version__,
            instructions="lemon-skills gateway: this project's skills and the tools, resources "
            "and prompts of its MCP servers (mcp_<server>_<tool>), under lemon's policy. "
            "When no listed tool fits, call tool_search.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self.items.list_resources,
            on_list_resource_templates=self.items.list_templates,
            on_read_resource=self.items.read_resource,
            on_list_prompts=self.items.list_prompts,
            on_get_prompt=self.items.get_prompt,
            on_subscriptions_listen=self._listen,
        )
        for method in ("skills/list", "skills/get"):
            entry = self.skills.server.get_request_handler(method)
            if entry is not None:
                srv.add_request_handler(method, entry.params_type, entry.handler)
        srv.extensions.update(self.skills.server.extensions)
        srv.middleware.append(ListingFastPath(self.visible, srv))
        # 2026-07-28 requestState is sealed under the deployment's secret when replicas share
        # one (any replica opens it), else under a key of this process.
        if self.options.secret is not None:
            srv.middleware.append(self.options.secret.boundary())
        else:
            srv.middleware.append(
                RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=srv.name)
            )
        return srv

    def skill(self, method: str, client: Client) -> Any:
        """The skills server's handler of ``method`` for ``client``'s agent."""
        skills = self._agents.get(client.agent)
        if skills is None:
            skills = self._agents[client.agent] = SkillServer(
                Options(cwd=self.options.cwd, agent=client.agent)
            )
            if self._tg is not None:
                self._tg.start_soon(skills.watch)
        entry = skills.server.get_request_handler(method)
        assert entry is not None
        return entry.handler

    # -- the catalogue ------------------------------------------------------------------

    async def listing(self, agent: str | None = None) -> catalog.Listing:
        """The shared upstreams' catalogue as ``agent`` is served it now (discovers on first
        use and when stale)."""
        return await self._built(self.source, agent, self._listings)

    async def listings(self, client: Client) -> list[catalog.Listing]:
        """Every catalogue ``client`` sees: the shared one, and its own servers' if any."""
        out = [await self.listing(client.agent)]
        own = await self.upstreams.of(client)
        if own is not None:
            out.append(await self._built(own, client.agent, client.cache))
        return out

    async def _built(
        self, source: McpSource, agent: str | None, cache: dict[Any, Any]
    ) -> catalog.Listing:
        tools = await source.adiscover_tools()
        view = source.catalogue()
        if view is None:
            return catalog.Listing(0, "all", {}, {}, (), source=source)
        hit: catalog.Listing | None = cache.get(agent)
        if hit is None or hit.generation != view.generation:
            profile = self._profile(agent)
            hit = cache[agent] = catalog.build(
                view, tools, self.options.tools, profile, self.options.budget, source
            )
        return hit

    def _profile(self, agent: str | None) -> profiles.Profile | None:
        if agent is None:
            return None
        v = registry.view(self.options.cwd)
        return profiles.select(v.enablement.profiles, agent)

    async def _watch(self) -> None:
        """Pass upstream ``list_changed`` news (seen as stale handles) on to the clients that
        see those servers: every client for the shared ones, one for its own."""
        while True:
            await anyio.sleep(WATCH_INTERVAL_S)
            if _stale(self.source):
                before = self._generation(self.source)
                try:
                    changed = (await self.listing()).generation != before
                except LemonSkillsError:
                    continue
                for client in self.clients.all():
                    await client.lists_changed(tools=changed, resources=True, prompts=True)
            for client in self.clients.all():
                own = client.source
                if own is not None and _stale(own):
                    before = self._generation(own)
                    with contextlib.suppress(LemonSkillsError):
                        after = (await self._built(own, client.agent, client.cache)).generation
                        await client.lists_changed(
                            tools=after != before, resources=True, prompts=True
                        )

    @staticmethod
    def _generation(source: McpSource) -> int:
        view = source.catalogue()
        return view.generation if view is not None else 0

    # -- tools --------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        own, rows, extra = await self.visible(ctx)
        return types.ListToolsResult(tools=[*own, *(lst.tools[n] for lst, n in rows), *extra])

    async def visible(self, ctx: Any) -> tuple[list[types.Tool], list[Row], list[Any]]:
        """What ``ctx``'s client lists: the skills' tools, the upstream tools shown (each with
        its listing) and the gateway's own tools (``tool_search``, ``read_result``)."""
        client = self.clients.of(ctx)
        own = await self.skill("tools/list", client)(ctx, None)
        listings = await self.listings(client)
        rows: list[Row] = []
        for lst in listings:
            shown = lst.tools if lst.mode == "all" else [*lst.pinned, *sorted(client.added)]
            rows += [(lst, n) for n in dict.fromkeys(shown) if n in lst.tools]
        extra = [_definition(read_result_tool)]
        if any(lst.mode == "search" for lst in listings):
            extra.insert(0, _definition(self._search_tool(listings)))
        return list(own.tools), rows, extra

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> Any:
        name, args = params.name, dict(params.arguments or {})
        client = self.clients.of(ctx)
        shared = self._listings.get(client.agent) or await self.listing(client.agent)
        where: catalog.Listing | None = shared if name in shared.specs else None
        if where is None:
            if name in ("find_skills", "read_skill", "skill_manage"):
                return await self.skill("tools/call", client)(ctx, params)
            if name == TOOL_SEARCH:
                return await self._tool_search(client, await self.listings(client), args)
            if name == read_result_tool.name:
                return await self._read_result(client, args)
            listings = await self.listings(client)
            where = next((lst for lst in listings if name in lst.specs), None)
            if where is None:
                return await self._unknown(ctx, client, name, args, listings)
        spec = where.specs[name]
        problem = validate_params(spec.input_schema, args)
        if problem is not None:
            return results.error_result(f"{name} was not called: {problem}")
        return await self._invoke(ctx, client, where.source, spec.server, name, args)

    async def _invoke(
        self,
        ctx: Any,
        client: Client,
        source: McpSource,
        server: str,
        name: str,
        args: dict[str, Any],
    ) -> types.CallToolResult | types.InputRequiredResult:
        who = Calling(client, ctx)
        token = calling.set(who)

        async def run() -> Any:
            with self.inflight.call(server, who):
                return await source.acall_tool(name, args, on_progress=_progress(ctx))

        try:
            if self._tg is not None and held.holds(ctx):  # upstream requests need rounds
                out = await self.held.resume(who)
                out = await self.held.run(self._tg, who, run) if out is None else out
                if isinstance(out, types.InputRequiredResult):
                    return out
            else:
                out = await run()
        except McpInputRequired as need:  # a 2026-07-28 host is asked; it retries with the answer
            return need.result  # type: ignore[no-any-return]
        except LemonSkillsError as exc:
            return results.error_result(say(exc))
        finally:
            calling.reset(token)
        cut = results.spilled_id(out)
        if cut is not None:
            client.results.add(cut)
        return results.call_result(out)

    async def _unknown(
        self, ctx: Any, client: Client, name: str, args: dict[str, Any], listings: list[Any]
    ) -> types.CallToolResult | types.InputRequiredResult:
        for lst in listings:
            view = lst.source.catalogue() if lst.source is not None else None
            handles = view.handles if view is not None else []
            owner = next((h for h in handles if name.startswith(f"mcp_{h.name}_")), None)
            if owner is None or not catalog.admits(self._profile(client.agent), owner.name):
                continue
            if not owner.connected:
                # A tool of a server that is down: the source says why, or reconnects it.
                return await self._invoke(ctx, client, lst.source, owner.name, name, args)
            held = await self._held(lst.source, owner.name, name)
            if held is not None:
                return results.error_result(held)
        known = [n for lst in listings for n in lst.specs]
        known += [TOOL_SEARCH, read_result_tool.name, "find_skills", "read_skill"]
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise MCPError(INVALID_PARAMS, f"unknown tool {name!r}{hint}")

    @staticmethod
    async def _held(source: McpSource, server: str, name: str) -> str | None:
        status = await source.astatus()
        for row in status["servers"].get(server, {}).get("held_tools", ()):
            if name == f"mcp_{server}_{row.get('tool')}":
                return (
                    f"{name} is withheld: {row.get('reason')}; review it, then run "
                    f"`lemon mcp approve-changes {server}`"
                )
        return None

    @staticmethod
    def _search_tool(listings: list[catalog.Listing]) -> Any:
        def search(query: str, limit: int) -> list[Any]:
            from lemon_skills.mcp.catalog.toolsearch import find_tools

            found = [
                m
                for lst in listings
                for m in find_tools(query, max_results=limit, source=lst.source)
                if m.spec.name in lst.objects
            ]
            found.sort(key=lambda m: -m.score)
            objects = {n: t for lst in listings for n, t in lst.objects.items()}
            return [objects[m.spec.name] for m in found[:limit]]

        return tool_search_tool(search)

    async def _tool_search(
        self, client: Client, listings: list[catalog.Listing], args: dict[str, Any]
    ) -> types.CallToolResult:
        tool = self._search_tool(listings)
        problem = validate_params(tool.parameters, args)
        if problem is not None:
            return results.error_result(f"tool_search was not called: {problem}")
        out = await tool.acall(args, ToolContext(cwd=self.options.cwd))
        new = [n for n in out.details.get("names", ()) if n not in client.added]
        if new and any(lst.mode == "search" for lst in listings):
            client.added.update(new)
            await client.tools_changed()
        return results.error_result(out.text) if out.is_error else _text(out.text)

    async def _read_result(self, client: Client, args: dict[str, Any]) -> types.CallToolResult:
        if str(args.get("id")) not in client.results:
            return results.error_result(f"no saved result {args.get('id')!r} for this client")
        out = await read_result_tool.acall(args, ToolContext(cwd=self.options.cwd))
        return results.error_result(out.text) if out.is_error else _text(out.text)

    async def _listen(self, ctx: Any, params: Any) -> Any:
        return await self.clients.of(ctx).listener()(ctx, params)


def _stale(source: McpSource) -> bool:
    view = source.catalogue()
    return view is not None and any(h.stale for h in view.handles)


def _progress(ctx: Any) -> Any:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        # A held call outlives the request that started it: its late progress just goes unheard.
        with contextlib.suppress(Exception):
            await ctx.session.report_progress(progress, total, message)

    return report


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _definition(tool: Any) -> types.Tool:
    return types.Tool(
        name=tool.name, description=tool.description, input_schema=dict(tool.parameters)
    )
