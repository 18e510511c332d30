"""lemon's skills and MCP tools for the OpenAI Agents SDK.

    from agents import Agent, Runner
    from lemon_skills.integrations.openai_agents import agent_options

    agent = Agent(name="assistant", model=model, **agent_options(cwd=project))

Importing this module imports ``agents`` (``pip install 'lemon-skills[openai-agents]'``);
``import lemon_skills`` never does. What it gives ``Agent(...)``:

* ``instructions``: a dynamic instructions function, the skills block for the run's input
  (``Lemon.turn``);
* ``tools``: function tools for ``read_skill`` (``skill_manage`` with ``skill_manage=True``),
  lemon's ``tool_search`` and every MCP tool; an MCP tool's ``is_enabled`` says whether lemon
  chose it for the request or a ``tool_search`` of this request found it, so a found tool is
  offered from the next model call on. The SDK's own ``ToolSearchTool`` / ``defer_loading`` is
  not used: it is a hosted Responses-API search the standard runner cannot hand to a local
  ranker, and other models (Chat Completions, LiteLLM) do not have it;
* approvals: an MCP tool's ``needs_approval`` asks lemon's policy for that call, so the run
  stops with ``result.interruptions``; ``state = result.to_state()``, ``state.approve(item)``
  or ``state.reject(item)``, then ``Runner.run(agent, state)``: approved, the call runs once;
  rejected, it never reaches the server and the model reads the rejection;
* results: text (spill notices included), images as ``ToolOutputImage`` data URLs, MCP errors
  as the tool's output text (the run goes on).

The MCP tools are listed when ``agent_options`` is called (``aagent_options`` from async
code); the servers then run on the source's own loop, reached from worker threads so the
run's loop never blocks, and stop at interpreter exit, or with ``await lemon.aclose()`` when
the host passes its own ``lemon=Lemon(cwd)``. ``options`` are ``integrations.turn.Options``.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
from typing import Any

try:
    from agents import FunctionTool, RunContextWrapper, ToolOutputImage, ToolOutputText
    from agents.tool_context import ToolContext as AgentsToolContext
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "lemon_skills.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'lemon-skills[openai-agents]'"
    ) from exc

from lemon_skills.integrations.results import reply
from lemon_skills.integrations.turn import Lemon
from lemon_skills.paths import PathArg
from lemon_skills.tool import Tool, ToolContext
from lemon_skills.tools.deferred import TOOL_SEARCH


def agent_options(
    cwd: PathArg = None, *, lemon: Lemon | None = None, **options: Any
) -> dict[str, Any]:
    """``instructions`` and ``tools`` for ``agents.Agent(...)`` (see the module docstring).

    Lists the MCP tools now; inside a running event loop use ``aagent_options``.
    """
    core = lemon if lemon is not None else Lemon(cwd, **options)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_options(core))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _options(core)).result()


async def aagent_options(
    cwd: PathArg = None, *, lemon: Lemon | None = None, **options: Any
) -> dict[str, Any]:
    """``agent_options`` from async code."""
    return await _options(lemon if lemon is not None else Lemon(cwd, **options))


async def _options(core: Lemon) -> dict[str, Any]:
    listing = await core.mcp_tools()

    async def instructions(ctx: RunContextWrapper[Any], agent: Any) -> str:
        return (await core.turn(request_of(ctx))).instructions

    tools = [_function_tool(core, t) for t in core.local_tools()]
    tools += [_function_tool(core, t, mcp=True) for t in listing.values()]
    return {"instructions": instructions, "tools": tools}


def _function_tool(core: Lemon, tool: Tool, *, mcp: bool = False) -> FunctionTool:
    name = tool.name

    async def invoke(ctx: AgentsToolContext[Any], arguments: str) -> Any:
        try:
            args = json.loads(arguments) if arguments else {}
        except json.JSONDecodeError as exc:
            return f"Invalid JSON arguments for {name}: {exc}"
        # The person's decision as the SDK recorded it for this very call: a server that
        # changed its listing since needs_approval was asked cannot turn "not asked" into
        # "approved" (lemon then refuses the call).
        approved = mcp and ctx.is_tool_approved(name, ctx.tool_call_id) is True
        context = ToolContext(cwd=core.cwd, tool_call_id=ctx.tool_call_id)
        result = await core.call(name, args, approved=approved, ctx=context)
        if name == TOOL_SEARCH and not result.is_error:
            core.remember(request_of(ctx), result.details.get("names", ()))
        out = reply(result)
        if not out.images:
            return out.text
        images = [
            ToolOutputImage(
                image_url=f"data:{i.media_type};base64,{base64.b64encode(i.data).decode()}"
            )
            for i in out.images
        ]
        return [ToolOutputText(text=out.text), *images]

    async def enabled(ctx: RunContextWrapper[Any], agent: Any) -> bool:
        return name in (await core.turn(request_of(ctx))).names

    async def approval(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        return core.needs_approval(name)

    return FunctionTool(
        name=name,
        description=tool.description,
        params_json_schema=dict(tool.parameters),
        on_invoke_tool=invoke,
        strict_json_schema=False,
        is_enabled=enabled if mcp or name == TOOL_SEARCH else True,
        needs_approval=approval if mcp else False,
    )


def request_of(ctx: RunContextWrapper[Any]) -> str:
    """The user's request: the text of the run input's last user message."""
    for item in reversed(ctx.turn_input):
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(
                str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
            )
    return ""
