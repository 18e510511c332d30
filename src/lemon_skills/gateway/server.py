"""The gateway's MCP server: one low-level SDK ``Server`` whose handlers route to the skills
server of ``lemon mcp serve`` (the same handlers, called as they are) and to the upstream
servers through one ``McpSource`` (its async API, inside the gateway's event loop).
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

from lemon_skills import __version__
from lemon_skills.approvals import ApprovalStore
from lemon_skills.errors import LemonSkillsError
from lemon_skills.gateway import catalog, results
from lemon_skills.gateway.clients import Calling, Client, Clients, calling
from lemon_skills.gateway.policy import Approver, Forwarder, Inflight
from lemon_skills.gateway.wire import ListingFastPath
from lemon_skills.mcp.source import McpSource
from lemon_skills.mcp.spill import read_result_tool
from lemon_skills.skills import registry
from lemon_skills.skills.selection import profiles
from lemon_skills.tool import ToolContext, validate_params
from lemon_skills.tools.deferred import TOOL_SEARCH, Mode, tool_search_tool
from lemon_skills.tools.serve.server import EXTENSION, Options, SkillServer

INVALID_PARAMS = -32602
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


class Gateway:
    """Build with options, then ``async with gateway.running(): ...`` and serve
    ``gateway.server`` on any transport."""

    def __init__(self, options: GatewayOptions, clients: Clients | None = None) -> None:
        self.options = options
        self.clients = clients or Clients(agent=options.agent)
        self.inflight = Inflight()
        forward = Forwarder(self.inflight)
        self.source = McpSource(
            options.servers,
            cwd=options.cwd,
            approve_call=Approver(options.approvals),
            elicitation_factory=forward.elicitation,
            sampling_delegate=forward.sampling,
            approvals=options.approvals,
        )
        self.skills = SkillServer(Options(cwd=options.cwd, agent=options.agent))
        #: Skill servers and listings of agents bound by a token (``TOKEN AGENT``).
        self._agents: dict[str | None, SkillServer] = {options.agent: self.skills}
        self._listings: dict[str | None, catalog.Listing] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._prompts: dict[str, tuple[str, str]] = {}
        self.server = self._build()

    # -- lifecycle ----------------------------------------------------------------------

    async def run(self, serve: Callable[[], Awaitable[None]]) -> None:
        """Run ``serve()`` with the upstream servers up and the watchers going."""
        async with self.source, anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self.skills.watch)
            tg.start_soon(self._watch)
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
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_subscriptions_listen=self._listen,
        )
        for method in ("skills/list", "skills/get"):
            entry = self.skills.server.get_request_handler(method)
            if entry is not None:
                srv.add_request_handler(method, entry.params_type, entry.handler)
        srv.extensions.update(self.skills.server.extensions)
        srv.middleware.append(ListingFastPath(self.visible, srv))
        return srv

    def _skill(self, method: str, client: Client) -> Any:
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
        """The upstream catalogue as ``agent`` is served it now (discovers on first use and
        when stale)."""
        tools = await self.source.adiscover_tools()
        view = self.source.catalogue()
        if view is None:
            return catalog.Listing(0, "all", {}, {}, ())
        hit = self._listings.get(agent)
        if hit is None or hit.generation != view.generation:
            profile = self._profile(agent)
            hit = self._listings[agent] = catalog.build(
                view, tools, self.options.tools, profile, self.options.budget
            )
        return hit

    def _profile(self, agent: str | None) -> profiles.Profile | None:
        if agent is None:
            return None
        v = registry.view(self.options.cwd)
        return profiles.select(v.enablement.profiles, agent)

    async def _watch(self) -> None:
        """Pass upstream ``list_changed`` news (seen as stale handles) on to every client."""
        while True:
            await anyio.sleep(WATCH_INTERVAL_S)
            view = self.source.catalogue()
            if view is None or not any(h.stale for h in view.handles):
                continue
            before = view.generation
            try:
                changed = (await self.listing()).generation != before
            except LemonSkillsError:
                continue
            for client in self.clients.all():
                await client.lists_changed(tools=changed, resources=True, prompts=True)

    # -- tools --------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        own, listing, names, extra = await self.visible(ctx)
        tools = [*own, *(listing.tools[n] for n in names), *extra]
        return types.ListToolsResult(tools=tools)

    async def visible(self, ctx: Any) -> tuple[list[types.Tool], Any, list[str], list[Any]]:
        """What ``ctx``'s client lists: the skills' tools, the listing and the names of it
        shown, and the gateway's own tools (``tool_search``, ``read_result``)."""
        client = self.clients.of(ctx)
        own = await self._skill("tools/list", client)(ctx, None)
        listing = await self.listing(client.agent)
        extra = [_definition(read_result_tool)]
        if listing.mode == "all":
            return list(own.tools), listing, list(listing.tools), extra
        shown = dict.fromkeys([*listing.pinned, *sorted(client.added)])
        extra.insert(0, _definition(self._search_tool(listing, client)))
        return list(own.tools), listing, [n for n in shown if n in listing.tools], extra

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> Any:
        name, args = params.name, dict(params.arguments or {})
        client = self.clients.of(ctx)
        listing = self._listings.get(client.agent) or await self.listing(client.agent)
        spec = listing.specs.get(name)
        if spec is None:
            if name in ("find_skills", "read_skill", "skill_manage"):
                return await self._skill("tools/call", client)(ctx, params)
            if name == TOOL_SEARCH:
                return await self._tool_search(client, await self.listing(client.agent), args)
            if name == read_result_tool.name:
                return await self._read_result(client, args)
            listing = await self.listing(client.agent)
            spec = listing.specs.get(name)
            if spec is None:
                return await self._unknown(ctx, client, name, args, listing)
        problem = validate_params(spec.input_schema, args)
        if problem is not None:
            return results.error_result(f"{name} was not called: {problem}")
        return await self._invoke(ctx, client, spec.server, name, args)

    async def _invoke(
        self, ctx: Any, client: Client, server: str, name: str, args: dict[str, Any]
    ) -> types.CallToolResult:
        who = Calling(client, ctx)
        token = calling.set(who)
        try:
            with self.inflight.call(server, who):
                out = await self.source.acall_tool(name, args, on_progress=_progress(ctx))
        except LemonSkillsError as exc:
            return results.error_result(_say(exc))
        finally:
            calling.reset(token)
        cut = results.spilled_id(out)
        if cut is not None:
            client.results.add(cut)
        return results.call_result(out)

    async def _unknown(
        self, ctx: Any, client: Client, name: str, args: dict[str, Any], listing: Any
    ) -> types.CallToolResult:
        view = self.source.catalogue()
        handles = view.handles if view is not None else []
        owner = next((h for h in handles if name.startswith(f"mcp_{h.name}_")), None)
        if owner is not None and catalog.admits(self._profile(client.agent), owner.name):
            if not owner.connected:
                # A tool of a server that is down: the source says why, or reconnects it.
                return await self._invoke(ctx, client, owner.name, name, args)
            held = await self._held(owner.name, name)
            if held is not None:
                return results.error_result(held)
        known = [*listing.specs, TOOL_SEARCH, read_result_tool.name, "find_skills", "read_skill"]
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise MCPError(INVALID_PARAMS, f"unknown tool {name!r}{hint}")

    async def _held(self, server: str, name: str) -> str | None:
        status = await self.source.astatus()
        for row in status["servers"].get(server, {}).get("held_tools", ()):
            if name == f"mcp_{server}_{row.get('tool')}":
                return (
                    f"{name} is withheld: {row.get('reason')}; review it, then run "
                    f"`lemon mcp approve-changes {server}`"
                )
        return None

    def _search_tool(self, listing: catalog.Listing, client: Client) -> Any:
        def search(query: str, limit: int) -> list[Any]:
            from lemon_skills.mcp.toolsearch import find_tools

            found = find_tools(query, max_results=limit, source=self.source)
            return [listing.objects[m.spec.name] for m in found if m.spec.name in listing.objects]

        return tool_search_tool(search)

    async def _tool_search(
        self, client: Client, listing: catalog.Listing, args: dict[str, Any]
    ) -> types.CallToolResult:
        tool = self._search_tool(listing, client)
        problem = validate_params(tool.parameters, args)
        if problem is not None:
            return results.error_result(f"tool_search was not called: {problem}")
        out = await tool.acall(args, ToolContext(cwd=self.options.cwd))
        new = [n for n in out.details.get("names", ()) if n not in client.added]
        if new and listing.mode == "search":
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

    # -- resources and prompts ----------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        client = self.clients.of(ctx)
        own = await self._skill("resources/list", client)(ctx, params)
        rows = await self._upstream("resources", client)
        extra = [r for r in rows if isinstance(r, types.Resource)]
        return types.ListResourcesResult(resources=[*own.resources, *extra])

    async def _list_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        client = self.clients.of(ctx)
        own = await self._skill("resources/templates/list", client)(ctx, params)
        rows = await self._upstream("resources", client)
        extra = [r for r in rows if isinstance(r, types.ResourceTemplate)]
        return types.ListResourceTemplatesResult(
            resource_templates=[*own.resource_templates, *extra]
        )

    async def _upstream(self, kind: Any, client: Client) -> list[Any]:
        listing = await self.listing(client.agent)
        report = await self.source.areport(kind)
        out: list[Any] = []
        for row in report.rows:
            server = str(row.get("server"))
            if catalog.slug(server) not in listing.servers:
                continue
            if kind == "prompts":
                self._prompts[catalog.prompt_name(server, row["name"])] = (server, row["name"])
                out.append(catalog.prompt(server, row))
            else:
                out.append(catalog.resource(server, row))
        return out

    async def _read_resource(self, ctx: Any, params: Any) -> types.ReadResourceResult:
        uri = str(params.uri)
        client = self.clients.of(ctx)
        if uri.startswith(results.RESULT_SCHEME):
            rid = uri[len(results.RESULT_SCHEME) :]
            if rid not in client.results:
                raise MCPError(INVALID_PARAMS, f"no such resource: {uri}")
            out = await read_result_tool.acall({"id": rid, "limit": 1 << 62}, ToolContext())
            text = out.text.rsplit("\n[characters ", 1)[0]
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
            )
        parts = catalog.unwrap_uri(uri)
        if parts is None:
            own: types.ReadResourceResult = await self._skill("resources/read", client)(ctx, params)
            return own
        listing = await self.listing(client.agent)
        server = listing.servers.get(parts[0])
        spec = listing.utilities.get((server or "", "resource_read"))
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"no such resource: {uri}")
        out = await self._utility(ctx, client, spec.server, spec.name, {"uri": parts[1]})
        contents: types.ReadResourceResult = results.read_contents(uri, out)
        return contents

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        client = self.clients.of(ctx)
        own = await self._skill("prompts/list", client)(ctx, params)
        extra = await self._upstream("prompts", client)
        return types.ListPromptsResult(prompts=[*own.prompts, *extra])

    async def _get_prompt(self, ctx: Any, params: Any) -> types.GetPromptResult:
        client = self.clients.of(ctx)
        if params.name not in self._prompts:
            await self._upstream("prompts", client)
        hit = self._prompts.get(params.name)
        if hit is None:
            skill: types.GetPromptResult = await self._skill("prompts/get", client)(ctx, params)
            return skill
        listing = await self.listing(client.agent)
        spec = listing.utilities.get((hit[0], "prompt_get"))
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"no prompt {params.name!r}")
        args = {"name": hit[1], "arguments": dict(params.arguments or {})}
        out = await self._utility(ctx, client, hit[0], spec.name, args)
        got: types.GetPromptResult = results.prompt_contents(out)
        return got

    async def _utility(
        self, ctx: Any, client: Client, server: str, name: str, args: dict[str, Any]
    ) -> Any:
        try:
            with self.inflight.call(server, Calling(client, ctx)):
                return await self.source.acall_tool(name, args)
        except LemonSkillsError as exc:
            raise MCPError(INVALID_PARAMS, _say(exc)) from None


def _progress(ctx: Any) -> Any:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.report_progress(progress, total, message)

    return report


def _say(exc: LemonSkillsError) -> str:
    hint = getattr(exc, "hint", None)
    return f"{exc}" + (f" (hint: {hint})" if hint else "")


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _definition(tool: Any) -> types.Tool:
    return types.Tool(
        name=tool.name, description=tool.description, input_schema=dict(tool.parameters)
    )
