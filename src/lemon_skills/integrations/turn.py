"""One agent's lemon, per request: the skills block, the tools to offer, and MCP calls.

The contract every framework adapter builds on:

* ``Lemon(cwd, **options)`` is made once per agent. ``async with lemon:`` opens its MCP
  connections (``connection``: counted entries, so concurrent runs may each enter, from any
  task, and the last exit closes them). Used without ``async with``, MCP runs on the source's
  private loop, reached from a worker thread (never blocking the caller's loop); ``aclose()``
  stops it.
* ``await lemon.turn(request, found=names)`` -> ``Turn``: ``instructions``, the skills block
  for the request within ``budget`` (``lemon_skills.prompt.arender``, which shares the budget
  with the tool definitions), and ``tools``: ``read_skill`` (and ``skill_manage`` with
  ``skill_manage=True``), then, as ``tool_mode`` says (``auto``/``all``/``search``, see
  ``tools/deferred``), every MCP tool or the ones ranked for the request plus ``found`` (tools
  a search returned earlier in the run) and ``tool_search`` for the rest (``deferred``).
  ``mcp`` maps every MCP tool's name to its ``Tool``; ``names`` are the offered names. A turn
  is cached per request, found names and catalogue generation, so a framework may ask for it at
  every step. ``lemon.remember(request, names)`` records tools a search found for a request
  (for frameworks that keep no such record themselves); later turns of it offer them too.
* ``lemon.search(query, limit)`` ranks the deferred MCP tools with lemon's ranker
  (``find_tools``); a framework with its own tool search calls it as its search function.
* ``lemon.needs_approval(name)`` says, without I/O or waiting, whether lemon's policy wants a
  person to approve that call (``policy``). The adapter pauses its run its own way and then
  ``await lemon.call(name, args, approved=True)`` runs the call once. Without ``approved``
  such a call is refused before it reaches the server; nothing ever waits on the approvals
  store inside a framework's run.
* ``lemon.call`` never raises for a tool's failure: bad arguments, unknown names and MCP
  errors come back as ``ToolResult(is_error=True)``; ``results.reply`` gives the text (spill
  notices included), the images and the error flag.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from lemon_skills.errors import UsageError
from lemon_skills.integrations import policy
from lemon_skills.integrations.connection import Connection
from lemon_skills.paths import PathArg, resolve_cwd
from lemon_skills.skills.prompt import DEFAULT_BUDGET
from lemon_skills.skills.selection.offer import render_prompt
from lemon_skills.tool import Tool, ToolContext, ToolResult
from lemon_skills.tools.deferred import (
    DEFAULT_SHARE,
    DEFAULT_TOP_K,
    MODES,
    TOOL_SEARCH,
    Mode,
    tool_search_tool,
    tool_tokens,
)
from lemon_skills.tools.prompt import arender

if TYPE_CHECKING:
    from lemon_skills.mcp.source import McpSource
    from lemon_skills.tools.registry import ToolRegistry

#: How long a listing of the servers is reused before the source is asked again (it keeps its
#: own cache; this spares the per-step hop to where the sessions live).
RELIST_S = 1.0
T = TypeVar("T")
#: The context window ``auto`` compares all tool definitions with when none is given.
DEFAULT_CONTEXT_TOKENS = 128_000
_TURN_CACHE = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """What an adapter's ``**options`` may set (every adapter takes the same ones)."""

    #: Characters the skills block and the tool definitions sent up front share.
    budget: int = DEFAULT_BUDGET
    #: ``auto`` defers MCP tools when all definitions exceed ``share`` of ``context_tokens``.
    tool_mode: Mode = "auto"
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    share: float = DEFAULT_SHARE
    #: MCP tools ranked for the request and sent up front when deferring.
    max_tools: int = DEFAULT_TOP_K
    #: Offer ``skill_manage`` (the agent may write skills) besides ``read_skill``.
    skill_manage: bool = False
    #: The skills.json agent profile to apply.
    agent: str | None = None
    #: Use the configured MCP servers (``mcp.json``, ``configure()``).
    mcp: bool = True

    def __post_init__(self) -> None:
        if self.tool_mode not in MODES:
            raise UsageError(f"unknown tool_mode {self.tool_mode!r} (use auto, all or search)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """What one model request gets."""

    request: str
    instructions: str
    tools: tuple[Tool, ...]
    deferred: tuple[str, ...]
    mcp: Mapping[str, Tool] = field(default_factory=dict)
    diagnostics: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()

    def tool(self, name: str) -> Tool | None:
        """The offered tool called ``name``."""
        return next((t for t in self.tools if t.name == name), None)


class Lemon:
    """Skills and MCP tools of ``cwd`` for one agent (see the module's contract).

    Args:
        cwd: the project directory (its ``.lemon`` skills and MCP config apply).
        source: an ``McpSource`` the host manages (never closed here); default: one of its
            own, opened by ``async with`` or on first use.
        options: the fields of ``Options``.
    """

    def __init__(
        self, cwd: PathArg = None, *, source: McpSource | None = None, **options: Any
    ) -> None:
        self.cwd: Path = resolve_cwd(cwd)
        self.options = Options(**options)
        self._conn = Connection(self.cwd, source=source, enabled=self.options.mcp)
        self._registries: dict[int, ToolRegistry] = {}
        self._turns: dict[tuple[object, ...], Turn] = {}
        self._totals: dict[object, int] = {}
        self._builtins = {t.name: t for t in _builtins(self.options.skill_manage)}
        self._search_tool = tool_search_tool(self.rank)
        self._listing: dict[str, Tool] = {}
        self._found: dict[str, tuple[str, ...]] = {}
        self._listed: tuple[object, float] = (None, 0.0)
        self._latest: dict[str, tuple[object, tuple[object, float], Turn]] = {}
        self._pending: dict[tuple[object, ...], asyncio.Future[Any]] = {}

    async def __aenter__(self) -> Lemon:
        await self._conn.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._conn.__aexit__(*exc)

    async def aclose(self) -> None:
        """Stop the MCP servers started without ``async with``."""
        await self._conn.aclose()

    @property
    def source(self) -> McpSource | None:
        """Where MCP tools come from now (None with ``mcp=False``)."""
        return self._conn.source

    async def turn(self, request: str, *, found: Iterable[str] = ()) -> Turn:
        """The instructions and tools for ``request`` (see the module's contract)."""
        found = tuple(found)
        asked = (found, self._found.get(request, ()))
        last = self._latest.get(request)
        listed = self._listed
        if (
            last is not None
            and last[0] == asked
            and last[1] is listed
            and time.monotonic() - listed[1] < RELIST_S
        ):
            # The hot path: every tool of a framework may ask at every step.
            return last[2]
        source = self.source
        listing = await self._mcp(source)
        view = source.catalogue(self.cwd) if source is not None else None
        generation = view.generation if view is not None else 0
        wanted = tuple(sorted({n for n in (*found, *self._found.get(request, ())) if n in listing}))
        key = (request, wanted, id(source), generation)
        hit = self._turns.get(key)
        if hit is not None:
            return hit
        turn = await self._once(
            key, lambda: self._build(request, wanted, source, listing, generation)
        )
        if len(self._turns) >= _TURN_CACHE:
            self._turns.clear()
            self._latest.clear()
        self._turns[key] = turn
        self._latest[request] = (asked, self._listed, turn)
        return turn

    def local_tools(self) -> list[Tool]:
        """The tools that are not MCP tools: ``read_skill`` (``skill_manage``), ``tool_search``."""
        return [*self._builtins.values(), self._search_tool]

    async def mcp_tools(self) -> Mapping[str, Tool]:
        """Every MCP tool of ``cwd`` by name (listing the servers on first use)."""
        return dict(await self._mcp(self.source))

    def remember(self, request: str, names: Iterable[str]) -> None:
        """Offer ``names`` (found by a search) in the later turns of ``request``."""
        if len(self._found) >= _TURN_CACHE and request not in self._found:
            self._found.clear()
        self._found[request] = tuple(dict.fromkeys((*self._found.get(request, ()), *names)))

    def rank(self, query: str, limit: int) -> list[Tool]:
        """The MCP tools that fit ``query``, best first (lemon's ranker; no I/O)."""
        source = self.source
        if source is None or not query.strip():
            return []
        from lemon_skills.mcp.catalog.toolsearch import find_tools

        names = [
            m.spec.name for m in find_tools(query, cwd=self.cwd, max_results=limit, source=source)
        ]
        return [self._listing[n] for n in names if n in self._listing]

    async def search(self, query: str, limit: int = DEFAULT_TOP_K) -> list[Tool]:
        """``rank`` after making sure the servers were listed."""
        await self._mcp(self.source)
        return self.rank(query, limit)

    def needs_approval(self, name: str) -> bool:
        """Whether lemon's policy wants a person to approve a call to ``name`` (no waiting)."""
        tool = self._listing.get(name)
        source = self.source
        if tool is None or source is None:
            return False
        return policy.needs_approval(source, tool, self.cwd)

    async def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        approved: bool = False,
        ctx: ToolContext | None = None,
    ) -> ToolResult:
        """Run the tool called ``name`` once (see the module's contract); never raises for
        the tool's own failures."""
        ctx = ctx or ToolContext(cwd=self.cwd)
        local = self._builtins.get(name) or (self._search_tool if name == TOOL_SEARCH else None)
        if local is not None:
            return await local.acall(args, ctx)
        source = self.source
        if source is None:
            return ToolResult.error(f"unknown tool {name!r}")
        listing = await self._mcp(source)
        tool = listing.get(name)
        if tool is None:
            return ToolResult.error(f"unknown tool {name!r}; call {TOOL_SEARCH} to find tools")
        return await policy.run(source, tool, args, approved=approved, ctx=ctx, cwd=self.cwd)

    # -- internals -------------------------------------------------------------------------

    async def _mcp(self, source: McpSource | None) -> dict[str, Tool]:
        if source is None:
            return {}
        listed = self._listed
        if listed[0] is source and time.monotonic() - listed[1] < RELIST_S:
            return self._listing
        tools = await self._once(("list", id(source)), lambda: source.adiscover_tools(self.cwd))
        if len(tools) != len(self._listing) or any(t.name not in self._listing for t in tools):
            self._listing = {t.name: t for t in tools}
        self._listed = (source, time.monotonic())
        return self._listing

    async def _once(self, key: tuple[object, ...], make: Callable[[], Awaitable[T]]) -> T:
        """``await make()``, shared by every caller asking for ``key`` while it runs (a
        framework asks for the same turn once per tool and step, concurrently)."""
        task = self._pending.get(key)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = self._pending[key] = asyncio.ensure_future(make())
            task.add_done_callback(lambda t: self._pending.pop(key, None))
        return cast(T, await asyncio.shield(task))

    async def _build(
        self,
        request: str,
        found: tuple[str, ...],
        source: McpSource | None,
        listing: Mapping[str, Tool],
        generation: int,
    ) -> Turn:
        o = self.options
        registry = self._registry(source)
        prompt_options: dict[str, Any] = {"cwd": self.cwd, "agent": o.agent}
        if self._mode(listing, generation) == "all":
            chosen = await registry.aselect_tools(self.cwd, mode="all")
            block = render_prompt(request, budget=o.budget, **prompt_options)
            tools: tuple[Tool, ...] = chosen.tools
        else:
            block = await arender(
                request,
                tools=True,
                registry=registry,
                max_tools=o.max_tools,
                budget=o.budget,
                **prompt_options,
            )
            sent = {t.name for t in block.tools}
            extra = tuple(listing[n] for n in found if n not in sent)
            tools = tuple(self._search_tool if t.name == TOOL_SEARCH else t for t in block.tools)
            tools += extra
        offered = {t.name for t in tools}
        return Turn(
            request=request,
            instructions=block.text,
            tools=tools,
            deferred=tuple(n for n in listing if n not in offered),
            mcp=dict(listing),
            diagnostics=tuple(block.diagnostics),
            names=frozenset(offered),
        )

    def _mode(self, listing: Mapping[str, Tool], generation: int) -> str:
        o = self.options
        if o.tool_mode != "auto" or not listing:
            return "all" if not listing else o.tool_mode
        total = self._totals.get(generation)
        if total is None:
            self._totals = {generation: tool_tokens([*self._builtins.values(), *listing.values()])}
            total = self._totals[generation]
        return "search" if total > o.share * o.context_tokens else "all"

    def _registry(self, source: McpSource | None) -> ToolRegistry:
        from lemon_skills.tools.registry import ToolRegistry

        key = id(source)
        registry = self._registries.get(key)
        if registry is None:
            self._registries = {
                key: ToolRegistry(
                    builtins=list(self._builtins.values()),
                    mcp_source=source if source is not None else False,
                )
            }
            registry = self._registries[key]
        return registry


def _builtins(manage: bool) -> list[Tool]:
    from lemon_skills.tools.read import read_skill

    if not manage:
        return [read_skill]
    from lemon_skills.tools.manage import skill_manage

    return [read_skill, skill_manage]
