"""One registry of every tool an agent may call: built-in, WASM, extension and MCP tools.

On a name conflict the first source wins, in the order built-in > WASM > extension > MCP; the
losers are dropped and listed in ``conflict_report()``. A provider that fails to load costs only
its own tools (reported as a load error). MCP tools come from an ``McpSource`` (the process-wide
one by default); the MCP SDK is imported only when MCP tools are actually asked for.

    registry = ToolRegistry()
    registry.register_extension(lambda cwd: [my_tool])
    tools = registry.get_tools("path/to/project")
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

from lemon_skills.paths import resolve_cwd
from lemon_skills.tool import Tool, ToolOrigin
from lemon_skills.tools.deferred import (
    DEFAULT_SHARE,
    DEFAULT_TOP_K,
    Mode,
    RankFn,
    ToolSelection,
    select,
)

if TYPE_CHECKING:
    from lemon_skills.mcp.source import McpSource

logger = logging.getLogger(__name__)

ToolProvider = Tool | Iterable[Tool] | Callable[[Path], Iterable[Tool]]
ORIGIN_ORDER: tuple[ToolOrigin, ...] = ("builtin", "wasm", "extension", "mcp")
BUILTIN_NAMES = ("read_skill", "skill_manage")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolConflict:
    """A tool dropped because an earlier source already claimed its name."""

    name: str
    winner: ToolOrigin
    winner_provider: str
    shadowed: ToolOrigin
    shadowed_provider: str

    def to_dict(self) -> dict[str, str]:
        """JSON view."""
        return {
            "name": self.name,
            "winner": self.winner,
            "winner_provider": self.winner_provider,
            "shadowed": self.shadowed,
            "shadowed_provider": self.shadowed_provider,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ConflictReport:
    """What ``get_tools`` resolved: counts per origin, the conflicts, the load errors."""

    conflicts: tuple[ToolConflict, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    load_errors: tuple[dict[str, str], ...] = ()
    mcp_conflicts: tuple[dict[str, Any], ...] = ()

    @property
    def total_tools(self) -> int:
        return sum(self.counts.values())

    @property
    def shadowed_count(self) -> int:
        return len(self.conflicts)

    @property
    def mcp_count(self) -> int:
        return self.counts.get("mcp", 0)

    def to_dict(self) -> dict[str, Any]:
        """The report in the original's shape (``builtin_count``, ``mcp_count``, ...)."""
        out: dict[str, Any] = {
            "conflicts": [c.to_dict() for c in self.conflicts],
            "total_tools": self.total_tools,
        }
        for origin in ORIGIN_ORDER:
            out[f"{origin}_count"] = self.counts.get(origin, 0)
        out["shadowed_count"] = self.shadowed_count
        out["load_errors"] = list(self.load_errors)
        out["mcp_conflicts"] = list(self.mcp_conflicts)
        return out


@dataclass(frozen=True, slots=True)
class _Provider:
    origin: ToolOrigin
    name: str
    provide: ToolProvider


class ToolRegistry:
    """Merge tools from every source for a working directory.

    Args:
        builtins: built-in tools; default: ``read_skill`` and ``skill_manage`` when installed.
        mcp_source: where MCP tools come from; ``None`` uses ``lemon_skills.mcp.default_source()``
            and ``False`` disables MCP tools.
    """

    def __init__(
        self,
        *,
        builtins: Iterable[Tool] | None = None,
        mcp_source: McpSource | Literal[False] | None = None,
    ) -> None:
        self._builtins = list(builtins) if builtins is not None else None
        self._mcp_source = mcp_source
        self._providers: list[_Provider] = []

    def register_wasm(self, provider: ToolProvider, *, name: str | None = None) -> None:
        """Add WASM tools: a ``Tool``, a list of them, or ``fn(cwd) -> tools``."""
        self._register("wasm", provider, name)

    def register_extension(self, provider: ToolProvider, *, name: str | None = None) -> None:
        """Add extension tools: a ``Tool``, a list of them, or ``fn(cwd) -> tools``."""
        self._register("extension", provider, name)

    def get_tools(
        self,
        cwd: str | Path | None = None,
        *,
        include_mcp: bool = True,
        **options: Unpack[SelectOptions],
    ) -> list[Tool]:
        """The tools to give the model in ``cwd``, built-ins first, each name once.

        ``mode="all"`` gives every tool. ``"search"`` defers MCP tools: the model gets the
        other tools, the MCP tools pinned by ``always_load``, the best ones for ``request``
        and ``tool_search`` to find the rest. ``"auto"`` is ``search`` when all definitions
        would take more than 10% of ``budget`` (context tokens), else ``all`` (so without a
        budget, every tool). ``select_tools`` says what was sent and what it cost.
        """
        return list(self.select_tools(cwd, include_mcp=include_mcp, **options).tools)

    def select_tools(
        self,
        cwd: str | Path | None = None,
        *,
        include_mcp: bool = True,
        **options: Unpack[SelectOptions],
    ) -> ToolSelection:
        """``get_tools`` with its account: the mode applied, the tools sent, the deferred
        names and the estimated tokens of all definitions and of those sent."""
        mcp = self._mcp_tools(cwd) if include_mcp else _NO_MCP
        return self._select(cwd, mcp, _Ask(**options))

    async def aget_tools(
        self,
        cwd: str | Path | None = None,
        *,
        include_mcp: bool = True,
        **options: Unpack[SelectOptions],
    ) -> list[Tool]:
        """``get_tools`` from async code (MCP discovery awaited, not blocking the loop)."""
        mcp = await self._amcp_tools(cwd) if include_mcp else _NO_MCP
        return list(self._select(cwd, mcp, _Ask(**options)).tools)

    async def aselect_tools(
        self,
        cwd: str | Path | None = None,
        *,
        include_mcp: bool = True,
        **options: Unpack[SelectOptions],
    ) -> ToolSelection:
        """``select_tools`` from async code (MCP discovery awaited, not blocking the loop)."""
        mcp = await self._amcp_tools(cwd) if include_mcp else _NO_MCP
        return self._select(cwd, mcp, _Ask(**options))

    def get_tool(self, name: str, cwd: str | Path | None = None) -> Tool | None:
        """The tool that wins ``name`` in ``cwd``, if any."""
        return next((t for t in self.get_tools(cwd) if t.name == name), None)

    def conflict_report(self, cwd: str | Path | None = None) -> ConflictReport:
        """Counts, conflicts and load errors of ``get_tools(cwd)``."""
        return self._resolve(cwd, self._mcp_tools(cwd))[1]

    def _select(self, cwd: str | Path | None, mcp: _McpPart, ask: _Ask) -> ToolSelection:
        tools = self._resolve(cwd, mcp)[0]
        mine = {id(t) for t in mcp.tools}
        return select(
            tools,
            deferrable=[t.name for t in tools if id(t) in mine],
            pinned=mcp.pinned,
            rank=mcp.rank,
            request=ask.request,
            budget=ask.budget,
            mode=ask.mode,
            share=ask.share,
            top_k=ask.top_k,
        )

    def _register(self, origin: ToolOrigin, provider: ToolProvider, name: str | None) -> None:
        label = name or getattr(provider, "__qualname__", None) or getattr(provider, "name", None)
        self._providers.append(_Provider(origin, str(label or origin), provider))

    def _resolve(self, cwd: str | Path | None, mcp: _McpPart) -> tuple[list[Tool], ConflictReport]:
        where = resolve_cwd(cwd)
        errors: list[dict[str, str]] = list(mcp.errors)
        candidates: list[tuple[ToolOrigin, str, Tool]] = []
        builtins = self._builtins if self._builtins is not None else default_builtins()
        candidates += [("builtin", "builtin", t) for t in builtins]
        for origin in ("wasm", "extension"):
            batch: list[tuple[ToolOrigin, str, Tool]] = []
            for p in self._providers:
                if p.origin == origin:
                    batch += [(p.origin, p.name, t) for t in _load(p, where, errors)]
            if origin == "extension":
                batch.sort(key=lambda c: (c[2].name, c[1]))
            candidates += batch
        candidates += [("mcp", "mcp", t) for t in mcp.tools]
        return _merge(candidates, errors, mcp.conflicts)

    def _mcp(self) -> McpSource | None:
        if self._mcp_source is False:
            return None
        if self._mcp_source is None:
            from lemon_skills.mcp.source import default_source

            return default_source()
        return self._mcp_source

    def _mcp_tools(self, cwd: str | Path | None) -> _McpPart:
        source = self._mcp()
        if source is None:
            return _NO_MCP
        try:
            tools = source.discover_tools(cwd)
        except Exception as exc:  # MCP trouble must never cost the agent its other tools
            return _mcp_failure(exc)
        return _mcp_part(source, cwd, tools)

    async def _amcp_tools(self, cwd: str | Path | None) -> _McpPart:
        source = self._mcp()
        if source is None:
            return _NO_MCP
        try:
            tools = await source.adiscover_tools(cwd)
        except Exception as exc:  # MCP trouble must never cost the agent its other tools
            return _mcp_failure(exc)
        return _mcp_part(source, cwd, tools)


class SelectOptions(TypedDict, total=False):
    """What ``get_tools``, ``aget_tools`` and ``select_tools`` take besides ``cwd``."""

    request: str | None
    budget: int | None
    mode: Mode
    share: float
    top_k: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ask:
    """What a caller asked ``select_tools`` for (the defaults of ``SelectOptions``)."""

    request: str | None = None
    budget: int | None = None
    mode: Mode = "auto"
    share: float = DEFAULT_SHARE
    top_k: int = DEFAULT_TOP_K


def _no_rank(query: str, limit: int) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class _McpPart:
    tools: list[Tool]
    errors: tuple[dict[str, str], ...]
    conflicts: tuple[dict[str, Any], ...]
    pinned: tuple[str, ...] = ()
    rank: RankFn = _no_rank


def _mcp_part(source: McpSource, cwd: str | Path | None, tools: list[Tool]) -> _McpPart:
    from lemon_skills.mcp.catalog.toolsearch import find_tools

    view = source.catalogue(cwd)
    pinned = tuple(s.name for s in view.specs if s.always_load) if view is not None else ()

    def rank(query: str, limit: int) -> list[str]:
        return [m.spec.name for m in find_tools(query, cwd=cwd, max_results=limit, source=source)]

    return _McpPart(tools, (), tuple(source.naming_conflicts(cwd)), pinned, rank)


_NO_MCP = _McpPart([], (), ())


def _mcp_failure(exc: Exception) -> _McpPart:
    logger.warning("MCP tools unavailable: %s", exc)
    return _McpPart([], ({"provider": "mcp", "error": f"{type(exc).__name__}: {exc}"},), ())


def _load(p: _Provider, cwd: Path, errors: list[dict[str, str]]) -> list[Tool]:
    try:
        provided = p.provide(cwd) if callable(p.provide) else p.provide
        tools = [provided] if isinstance(provided, Tool) else list(provided)
        bad = [t for t in tools if not isinstance(t, Tool)]
        if bad:
            raise TypeError(f"provider returned {type(bad[0]).__name__}, not Tool")
    except Exception as exc:  # one broken provider must not cost the other tools
        logger.warning("tool provider %s failed: %s", p.name, exc)
        errors.append({"provider": p.name, "origin": p.origin, "error": f"{exc}"})
        return []
    return tools


def _merge(
    candidates: list[tuple[ToolOrigin, str, Tool]],
    errors: list[dict[str, str]],
    mcp_conflicts: tuple[dict[str, Any], ...],
) -> tuple[list[Tool], ConflictReport]:
    winners: dict[str, tuple[ToolOrigin, str, Tool]] = {}
    conflicts: list[ToolConflict] = []
    for origin, provider, tool in candidates:
        won = winners.get(tool.name)
        if won is None:
            winners[tool.name] = (origin, provider, tool)
            continue
        conflicts.append(
            ToolConflict(
                name=tool.name,
                winner=won[0],
                winner_provider=won[1],
                shadowed=origin,
                shadowed_provider=provider,
            )
        )
        logger.info("tool %s from %s shadowed by %s", tool.name, origin, won[0])
    counts: dict[str, int] = dict.fromkeys(ORIGIN_ORDER, 0)
    for origin, _p, _t in winners.values():
        counts[origin] += 1
    report = ConflictReport(
        conflicts=tuple(conflicts),
        counts=counts,
        load_errors=tuple(errors),
        mcp_conflicts=mcp_conflicts,
    )
    return [t for _o, _p, t in winners.values()], report


def default_builtins() -> list[Tool]:
    """``read_skill`` and ``skill_manage`` when the package provides them."""
    tools: list[Tool] = []
    for name in BUILTIN_NAMES:
        tool = _find_builtin(name)
        if tool is not None:
            tools.append(tool)
    return tools


def _find_builtin(name: str) -> Tool | None:
    pkg = importlib.import_module("lemon_skills.tools")
    found: Any = getattr(pkg, name, None)
    if found is None:
        try:
            found = importlib.import_module(f"lemon_skills.tools.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"lemon_skills.tools.{name}":
                raise
            return None
    if isinstance(found, ModuleType):
        found = getattr(found, name, None) or getattr(found, "TOOL", None)
    return found if isinstance(found, Tool) else None
