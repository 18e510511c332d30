"""Calling a catalogue's tools under their server's policy: ``SourceCore``, the async engine
behind ``McpSource``.

A tool call is refused while pinning holds the tool (checked against the shared pins before
every call), waits for the approver when the entry's ``approve`` policy asks, runs under the
entry's deadline and comes back as a ``ToolResult``, spilled to a file past the entry's result
budget. The catalogue's utility tools (resources and prompts) go to ``reads``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp import Client

from lemon_skills import state
from lemon_skills.errors import McpConnectError, McpToolError
from lemon_skills.mcp.catalog import reads
from lemon_skills.mcp.catalog.build import ToolSpec
from lemon_skills.mcp.catalog.views import Views
from lemon_skills.mcp.output.report import require_server
from lemon_skills.mcp.output.results import json_result, tool_result
from lemon_skills.mcp.output.spill import over_budget, spill
from lemon_skills.mcp.session.deadline import OnProgressFn
from lemon_skills.mcp.session.handle import ServerHandle
from lemon_skills.mcp.session.manager import McpManager
from lemon_skills.telemetry import otel
from lemon_skills.tool import ToolResult

#: Decides one tool call that needs approval: True, or why not (a sentence).
Approver = Callable[[dict[str, Any]], Awaitable["bool | str"]]


class SourceCore(Views):
    """The views of every directory a source has been asked about, and calls to their tools."""

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
        super().__init__(
            manager,
            servers=servers,
            include_config=include_config,
            disabled=disabled,
            cache_ttl_s=cache_ttl_s,
        )
        self.approver = approver

    async def call(
        self,
        name: str,
        params: dict[str, Any],
        cwd: Path,
        timeout: float | None,
        on_progress: OnProgressFn | None,
        approved: bool,
    ) -> ToolResult:
        """Call the tool ``name`` of ``cwd`` (see ``resolve`` and ``invoke``)."""
        spec = await self.resolve(name, cwd)
        return await self.invoke(
            spec, params, timeout=timeout, on_progress=on_progress, approved=approved
        )

    async def approve_server(self, cwd: Path, server: str) -> list[str]:
        """Pin the tools ``server`` of ``cwd`` lists now (see ``approve_changes``).

        Raises:
            McpError: ``server`` names no configured server, or it cannot be reached.
        """
        require_server(self.view(cwd).config, server)
        view = await self.discover(cwd, force=True, only=(server,))
        handle = next(h for h in view.handles if h.name == server)
        if not handle.connected:
            raise McpConnectError(
                f"cannot list its tools: {handle.last_error or 'not connected'}", server=server
            )
        return self.approve_changes(handle)

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
            return json_result(await reads.resources(self.manager, h), server=spec.server)
        if spec.kind == "resource_read":
            return await reads.read(self.manager, h, spec.server, _text_param(args, "uri"))
        if spec.kind == "prompts_list":
            return json_result(await reads.prompts(self.manager, h), server=spec.server)
        return await reads.prompt(self.manager, h, spec.server, _text_param(args, "name"), args)

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


def _text_param(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise McpToolError(f"missing parameter {key!r}")
    return value


def _call_attributes(spec: ToolSpec) -> dict[str, Any]:
    return {
        "lemon.server": spec.server,
        "gen_ai.tool.name": spec.target,
        "lemon.tool": spec.name,
        "lemon.approval.asked": False,
        "lemon.pin.held": False,
    }
