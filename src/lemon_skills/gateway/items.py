"""Resources and prompts through the gateway: the skills' own (the handlers of ``lemon mcp
serve``), each upstream server's namespaced (``mcp+<server>:<uri>``, ``mcp_<server>_<name>``)
and read through its source's ``resource_read`` / ``prompt_get`` utilities, so the server's
filters and result cap apply; and cut results (``lemon-result:<id>``), for their client only.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcp import types
from mcp.shared.exceptions import MCPError

from lemon_skills.errors import LemonSkillsError
from lemon_skills.gateway import catalog, results
from lemon_skills.gateway.clients import Calling, Client, Clients
from lemon_skills.gateway.policy import Inflight
from lemon_skills.mcp.output.spill import read_result_tool
from lemon_skills.tool import ToolContext

INVALID_PARAMS = -32602


class Host(Protocol):
    """What the handlers need of the gateway (``gateway.server.Gateway``)."""

    clients: Clients
    inflight: Inflight

    def skill(self, method: str, client: Client) -> Any: ...

    async def listings(self, client: Client) -> list[catalog.Listing]: ...


class Items:
    """The resource and prompt handlers of one gateway."""

    def __init__(self, gateway: Host) -> None:
        self.gw = gateway
        #: Listed prompt name -> (server, the server's prompt name).
        self._prompts: dict[str, tuple[str, str]] = {}

    async def list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        client = self.gw.clients.of(ctx)
        own = await self.gw.skill("resources/list", client)(ctx, params)
        rows = await self._upstream("resources", client)
        extra = [r for r in rows if isinstance(r, types.Resource)]
        return types.ListResourcesResult(resources=[*own.resources, *extra])

    async def list_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        client = self.gw.clients.of(ctx)
        own = await self.gw.skill("resources/templates/list", client)(ctx, params)
        rows = await self._upstream("resources", client)
        extra = [r for r in rows if isinstance(r, types.ResourceTemplate)]
        return types.ListResourceTemplatesResult(
            resource_templates=[*own.resource_templates, *extra]
        )

    async def read_resource(self, ctx: Any, params: Any) -> types.ReadResourceResult:
        uri = str(params.uri)
        client = self.gw.clients.of(ctx)
        if uri.startswith(results.RESULT_SCHEME):
            return await _whole_result(client, uri)
        parts = catalog.unwrap_uri(uri)
        if parts is None:
            own: types.ReadResourceResult = await self.gw.skill("resources/read", client)(
                ctx, params
            )
            return own
        for listing in await self.gw.listings(client):
            spec = listing.utilities.get((listing.servers.get(parts[0], ""), "resource_read"))
            if spec is not None:
                out = await self._utility(ctx, client, listing, spec, {"uri": parts[1]})
                contents: types.ReadResourceResult = results.read_contents(uri, out)
                return contents
        raise MCPError(INVALID_PARAMS, f"no such resource: {uri}")

    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        client = self.gw.clients.of(ctx)
        own = await self.gw.skill("prompts/list", client)(ctx, params)
        extra = await self._upstream("prompts", client)
        return types.ListPromptsResult(prompts=[*own.prompts, *extra])

    async def get_prompt(self, ctx: Any, params: Any) -> types.GetPromptResult:
        client = self.gw.clients.of(ctx)
        if params.name not in self._prompts:
            await self._upstream("prompts", client)
        hit = self._prompts.get(params.name)
        if hit is None:
            skill: types.GetPromptResult = await self.gw.skill("prompts/get", client)(ctx, params)
            return skill
        for listing in await self.gw.listings(client):
            spec = listing.utilities.get((hit[0], "prompt_get"))
            if spec is not None:
                args = {"name": hit[1], "arguments": dict(params.arguments or {})}
                out = await self._utility(ctx, client, listing, spec, args)
                got: types.GetPromptResult = results.prompt_contents(out)
                return got
        raise MCPError(INVALID_PARAMS, f"no prompt {params.name!r}")

    async def _upstream(self, kind: Any, client: Client) -> list[Any]:
        out: list[Any] = []
        for listing in await self.gw.listings(client):
            report = await listing.source.areport(kind)
            for row in report.rows:
                server = str(row.get("server"))
                if catalog.slug(server) not in listing.servers:
                    continue
                if kind == "prompts":
                    name = catalog.prompt_name(server, row["name"])
                    self._prompts[name] = (server, row["name"])
                    out.append(catalog.prompt(server, row))
                else:
                    out.append(catalog.resource(server, row))
        return out

    async def _utility(
        self, ctx: Any, client: Client, listing: Any, spec: Any, args: dict[str, Any]
    ) -> Any:
        try:
            with self.gw.inflight.call(spec.server, Calling(client, ctx)):
                return await listing.source.acall_tool(spec.name, args)
        except LemonSkillsError as exc:
            raise MCPError(INVALID_PARAMS, say(exc)) from None


async def _whole_result(client: Client, uri: str) -> types.ReadResourceResult:
    rid = uri[len(results.RESULT_SCHEME) :]
    if rid not in client.results:
        raise MCPError(INVALID_PARAMS, f"no such resource: {uri}")
    out = await read_result_tool.acall({"id": rid, "limit": 1 << 62}, ToolContext())
    text = out.text.rsplit("\n[characters ", 1)[0]
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
    )


def say(exc: LemonSkillsError) -> str:
    """An error and its hint, in one line for the host."""
    hint = getattr(exc, "hint", None)
    return f"{exc}" + (f" (hint: {hint})" if hint else "")
