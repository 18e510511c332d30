"""What every framework adapter needs from lemon for one agent: per request, the skills block
and the tools to offer; the policy's verdict on a call; and a way to run a call the framework's
own human-in-the-loop approved without asking lemon's approvals store again.

The MCP source an adapter opens is its own (``McpSource(approve_call=...)``): a call that the
server's ``approve`` policy gates runs only inside ``granted(name, arguments)``, which the
adapter enters after its framework's reviewer approved that exact call. Anything else that
reaches the gate is refused at once, never parked on the approvals store, so no thread of a
framework run ever blocks waiting for an operator.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from lemon_skills.paths import PathArg, resolve_cwd
from lemon_skills.tool import CHARS_PER_TOKEN, Tool
from lemon_skills.tools.deferred import DEFAULT_TOP_K, TOOL_SEARCH, Mode, tool_tokens

if TYPE_CHECKING:
    from lemon_skills.mcp.source import McpSource
    from lemon_skills.tools.registry import ToolRegistry

#: The context window ``auto`` measures all tool definitions against (tokens).
DEFAULT_CONTEXT_TOKENS = 200_000

_GRANT: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "lemon_integration_grant", default=None
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """What one model call gets: the skills block and the tools to offer."""

    system: str
    tools: tuple[Tool, ...]
    deferred: tuple[str, ...]
    diagnostics: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)


class Session:
    """lemon's skills and MCP tools for one agent in ``cwd``.

    Args:
        cwd: the project (skills and ``.lemon/mcp.json``); default the current directory.
        tools: ``auto`` (defer MCP tools once all definitions pass 10% of
            ``context_tokens``), ``all`` or ``search`` (the request's best ``max_tools`` MCP
            tools and ``tool_search`` for the rest).
        skill_manage: offer ``skill_manage`` beside ``read_skill``.
        budget: characters for the skills block and the tools sent (``prompt.render``).
        agent: the skills.json agent profile to apply.
        servers: MCP server entries instead of the configured ones.
        source: an ``McpSource`` to use; it must have been built with
            ``approve_call=session.decide`` for approved calls to run.
    """

    def __init__(
        self,
        cwd: PathArg = None,
        *,
        tools: Mode = "auto",
        max_tools: int = DEFAULT_TOP_K,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        skill_manage: bool = False,
        budget: int | None = None,
        agent: str | None = None,
        servers: Sequence[object] | None = None,
        source: McpSource | None = None,
    ) -> None:
        from lemon_skills.mcp.source import McpSource
        from lemon_skills.tools.manage import skill_manage as manage_tool
        from lemon_skills.tools.read import read_skill
        from lemon_skills.tools.registry import ToolRegistry

        self.cwd: Path = resolve_cwd(cwd)
        self.mode: Mode = tools
        self.max_tools = max_tools
        self.context_tokens = context_tokens
        self.budget = budget
        self.agent = agent
        self.source = source or McpSource(servers, cwd=self.cwd, approve_call=self.decide)
        self.builtins: tuple[Tool, ...] = (read_skill, manage_tool) if skill_manage else (read_skill,)
        self.registry: ToolRegistry = ToolRegistry(builtins=self.builtins, mcp_source=self.source)

    # -- per request -------------------------------------------------------------------

    def turn(self, request: str, loaded: Sequence[str] = ()) -> Turn:
        """The skills block and tools for ``request``; ``loaded`` names tools an earlier
        ``tool_search`` found, offered again now. Sync: MCP discovery may start servers."""
        from lemon_skills.tools.prompt import render

        chosen = self.registry.select_tools(
            self.cwd, request=request, mode=self.mode, budget=self.context_tokens
        )
        options: dict[str, Any] = {"cwd": self.cwd, "agent": self.agent}
        if self.budget is not None:
            options["budget"] = self.budget
        if chosen.mode == "search":
            block = render(
                request, tools=True, registry=self.registry, max_tools=self.max_tools, **options
            )
            tools, deferred = block.tools, chosen.deferred
        else:
            from lemon_skills.skills.api import render_prompt
            from lemon_skills.skills.prompt import DEFAULT_BUDGET

            cost = tool_tokens(chosen.tools) * CHARS_PER_TOKEN
            options["budget"] = max(0, (self.budget or DEFAULT_BUDGET) - cost)
            block, tools, deferred = render_prompt(request, **options), chosen.tools, ()
        extra = self._loaded(loaded, {t.name for t in tools})
        return Turn(
            system=block.text,
            tools=(*tools, *extra),
            deferred=tuple(n for n in deferred if n not in {t.name for t in extra}),
            diagnostics=tuple(str(d) for d in block.diagnostics),
        )

    async def aturn(self, request: str, loaded: Sequence[str] = ()) -> Turn:
        """``turn`` from async code: ranking and any MCP discovery run off the event loop."""
        return await anyio.to_thread.run_sync(lambda: self.turn(request, loaded))

    def _loaded(self, names: Sequence[str], have: set[str]) -> list[Tool]:
        wanted = [n for n in dict.fromkeys(names) if n not in have and n != TOOL_SEARCH]
        if not wanted:
            return []
        by_name = {t.name: t for t in self.source.discover_tools(self.cwd)}
        return [by_name[n] for n in wanted if n in by_name]

    def find_tool(self, name: str) -> Tool | None:
        """The tool this session offers under ``name`` in any turn (sync: may discover)."""
        if name == TOOL_SEARCH:
            chosen = self.registry.select_tools(self.cwd, mode="search", top_k=0)
            return next((t for t in chosen.tools if t.name == TOOL_SEARCH), None)
        mine = next((t for t in self.builtins if t.name == name), None)
        return mine or next(iter(self._loaded([name], set())), None)

    # -- the policy, without I/O -------------------------------------------------------

    def needs_approval(self, name: str) -> bool:
        """Whether lemon's policy (``approve``, ``approve_tools``, annotations) holds a call to
        ``name`` for a person; from the last discovery, so it starts nothing."""
        view = self.source.catalogue(self.cwd)
        if view is None:
            return False
        return any(s.name == name and s.approve for s in view.specs)

    def is_mcp(self, name: str) -> bool:
        """Whether ``name`` is an MCP tool of the last discovery."""
        view = self.source.catalogue(self.cwd)
        return view is not None and any(s.name == name for s in view.specs)

    @contextmanager
    def granted(self, name: str, arguments: Mapping[str, Any]) -> Iterator[None]:
        """Let exactly this call through lemon's approval gate (the framework approved it)."""
        token = _GRANT.set((name, _canonical(arguments)))
        try:
            yield
        finally:
            _GRANT.reset(token)

    def decide(self, request: dict[str, Any]) -> bool:
        """The ``approve_call`` of this session's source: yes for the granted call only."""
        grant = _GRANT.get()
        return grant is not None and grant == (
            request["name"],
            _canonical(request.get("arguments") or {}),
        )

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop the MCP servers this session started."""
        self.source.close()


def _canonical(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, default=str)


def latest_request(texts: Sequence[str]) -> str:
    """The last non-empty user text, the request the skills and tools are chosen for."""
    return next((t for t in reversed(texts) if t.strip()), "")
