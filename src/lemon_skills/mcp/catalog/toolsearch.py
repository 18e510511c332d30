"""Rank MCP tools for a request: the tool adapter of the shared ranking core.

Each tool is one ``lemon_skills.search`` document of named fields: its name split into words
(``_``, ``-``, ``.``, camelCase) with its title; its server's name; the first sentence of its
description; the whole description; its parameter names; its parameter descriptions; and the
server's ``instructions``. The core ranks them as it ranks skills (BM25F, typo and compound
readings, phrases, exact name, coverage, the abstain bar), so ``find_tools`` returns ``[]``
when no tool fits and every match carries the parts of its score.

Tool lists come from the catalogue a source already holds (``McpSource.catalogue``): ranking
never starts a server. The index is built once per catalogue version and server subset.

With the semantic extra and its model installed (unless ``semantic=False`` or
``LEMON_SEMANTIC=0``) each tool's name, title and description is also embedded
(``lemon_skills.search.embed``, vectors cached on disk by text), and similarity to the request
adds to the lexical score, as for skills.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemon_skills.errors import ConfigError
from lemon_skills.mcp.catalog.build import ToolSpec
from lemon_skills.paths import PathArg
from lemon_skills.search import Document, Index, Weights, build_index, embed, scoring, tokens
from lemon_skills.search.metrics import Case, Report, evaluate
from lemon_skills.telemetry import otel

if TYPE_CHECKING:
    from lemon_skills.mcp.source import McpSource

#: Field weights and length normalisation, chosen by cross-validation on the tool bench
#: (``benchmarks/tool_eval.py``). Parameters and server instructions are bags of words: they
#: mention many things a tool is not about.
WEIGHTS = Weights(
    field_weight={
        "name": 5.0,
        "server": 4.0,
        "lead": 3.0,
        "description": 2.0,
        "param_names": 0.5,
        "param_text": 0.2,
        "instructions": 0.2,
    },
    field_b={
        "name": 0.3,
        "server": 0.3,
        "lead": 0.5,
        "description": 0.5,
        "param_names": 0.6,
        "param_text": 0.75,
        "instructions": 0.75,
    },
    long_fields=frozenset({"param_names", "param_text", "instructions"}),
    min_score=0.25,
    # With the semantic extra (chosen by cross-validation, ``tool_eval.py --semantic``).
    semantic_weight=5.0,
    semantic_floor=0.2,
    semantic_min_score=0.25,
)
#: Text past this many characters is not indexed (a few servers put whole manuals in a field).
FIELD_CHARS = 4_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One ranked tool with the parts its score is made of (see ``search.scoring.explain``)."""

    spec: ToolSpec
    score: float
    parts: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``lemon mcp tools --for --json`` row."""
        return {**self.spec.to_dict(), "score": round(self.score, 4), "parts": dict(self.parts)}


@dataclass(frozen=True, slots=True)
class ToolIndex:
    """The ranking index over a fixed list of tool specs."""

    specs: tuple[ToolSpec, ...]
    core: Index
    #: The tools' embedding matrix, computed on the first semantic query.
    memo: dict[str, Any] = field(default_factory=dict, compare=False)


def tool_key(spec: ToolSpec) -> str:
    """``server/tool``: how labelled queries name a tool (the bench format)."""
    return f"{spec.server}/{spec.target}"


def tool_document(spec: ToolSpec, instructions: str = "") -> Document:
    """The fields ``spec`` is ranked by."""
    names, texts = _parameters(spec.input_schema)
    title = spec.title
    return Document(
        key=tool_key(spec),
        fields={
            "name": " ".join([*tokens.identifier_words(spec.target), title]),
            "server": " ".join(tokens.identifier_words(spec.server)),
            "lead": _first_sentence(spec.description),
            "description": spec.description[:FIELD_CHARS],
            "param_names": " ".join(names),
            "param_text": "\n".join(texts)[:FIELD_CHARS],
            "instructions": instructions[:FIELD_CHARS],
        },
        names=tuple(dict.fromkeys(n for n in (spec.target, spec.name, title) if n)),
    )


def build_tool_index(
    specs: Iterable[ToolSpec],
    instructions: Mapping[str, str] | None = None,
    *,
    weights: Weights = WEIGHTS,
) -> ToolIndex:
    """Index ``specs``; ``instructions`` maps a server name to its instructions text."""
    given = instructions or {}
    specs = tuple(specs)
    docs = [tool_document(s, given.get(s.server, "")) for s in specs]
    return ToolIndex(specs=specs, core=build_index(docs, weights))


def tool_text(spec: ToolSpec) -> str:
    """What is embedded for a tool: its name as words, its title and its description."""
    name = " ".join(tokens.identifier_words(spec.target))
    return f"{name} {spec.title}: {spec.description[:FIELD_CHARS]}"


def similar_tools(index: ToolIndex, request: str) -> dict[int, float]:
    """Tool number -> embedding similarity to ``request`` (the most similar, above the floor).

    Raises:
        ConfigError: the semantic extra or its model is not installed.
    """
    enc = embed.encoder()
    # The raw cosine, not centred as skills' is: on the tool bench centring lowered every
    # cross-validated figure (docs/decisions.md).
    matrix = index.memo.get("vectors")
    if matrix is None:
        matrix = index.memo["vectors"] = embed.vectors([tool_text(s) for s in index.specs], enc)
    request = scoring.said(index.core, request)  # names no tool states are not embedded
    return embed.top_similar(matrix, request, enc, floor=index.core.weights.semantic_floor)


def rank_tools(
    index: ToolIndex, request: str, *, limit: int = 5, semantic: bool = False
) -> list[ToolMatch]:
    """Best-first tools for ``request``, ``[]`` when none is relevant; ``semantic`` blends in
    embedding similarity (needs the semantic extra).

    Raises:
        ConfigError: ``semantic`` without the semantic extra or its model.
    """
    similar = similar_tools(index, request) if semantic and index.specs else None
    found = scoring.rank(index.core, request, limit=limit, similar=similar)
    return [ToolMatch(index.specs[m.doc], m.score, m.parts) for m in found]


def find_tools(
    request: str,
    *,
    cwd: PathArg = None,
    max_results: int = 5,
    servers: Sequence[str] | None = None,
    source: McpSource | None = None,
    semantic: bool | None = None,
) -> list[ToolMatch]:
    """The MCP tools that fit ``request``, best first; ``[]`` when none does.

    Ranks the catalogue ``source`` (default: the process-wide one) last discovered for
    ``cwd``, restricted to ``servers`` when given. Starts no server: before the first
    discovery (``discover_tools``) there is nothing to rank. Blocked and filtered tools are
    never in the catalogue, so never returned. ``semantic`` (default:
    ``$LEMON_SEMANTIC``, else whether the semantic extra is installed) adds embedding
    similarity.

    Raises:
        ConfigError: semantic ranking asked for without the semantic extra or its model.
    """
    if source is None:
        from lemon_skills.mcp.source import default_source

        source = default_source()
    view = source.catalogue(cwd)
    if view is None:
        return []
    subset = tuple(sorted(set(servers))) if servers is not None else None
    index = view.search.get(subset)
    if index is None:
        chosen = [s for s in view.specs if subset is None or s.server in subset]
        index = view.search[subset] = build_tool_index(chosen, view.instructions)
    started = time.perf_counter()
    with otel.span("lemon.tools.search") as current:
        found = rank_tools(index, request, limit=max_results, semantic=embed.requested(semantic))
        otel.set_attributes(
            current,
            {
                "lemon.tools.candidates": len(index.specs),
                "lemon.tools.chosen": [m.spec.name for m in found],
                "lemon.tools.none": not found,
            },
        )
    otel.record("lemon.tool_search.duration", time.perf_counter() - started)
    return found


@dataclass(frozen=True, slots=True)
class ToolEval:
    """Retrieval quality of the tool ranker on labelled queries, and how fast it answered."""

    report: Report
    p50_ms: float

    def to_dict(self) -> dict[str, Any]:
        """The ``lemon mcp eval --json`` object."""
        return {"queries": self.report.count, "p50_ms": self.p50_ms, **self.report.to_dict()}


def evaluate_tools(
    cases: Sequence[Case],
    specs: Iterable[ToolSpec],
    instructions: Mapping[str, str] | None = None,
    *,
    max_results: int = 10,
    semantic: bool = False,
) -> ToolEval:
    """Rank ``specs`` for every case (tools named ``server/tool``) and summarise.

    Raises:
        ConfigError: ``semantic`` without the semantic extra or its model.
    """
    index = build_tool_index(specs, instructions)
    if semantic:
        similar_tools(index, "")  # embed the tools before the clock starts
    times: list[float] = []

    def ranker(query: str) -> list[str]:
        start = time.perf_counter()
        found = rank_tools(index, query, limit=max_results, semantic=semantic)
        times.append((time.perf_counter() - start) * 1000)
        return [tool_key(m.spec) for m in found]

    report = evaluate(cases, ranker)
    return ToolEval(report=report, p50_ms=statistics.median(times) if times else 0.0)


# --- the bench format: tool definitions as JSON lines ----------------------------------------


def load_tool_file(path: Path) -> tuple[list[ToolSpec], dict[str, str]]:
    """Tool specs (and server instructions) from a JSONL file of tool definitions.

    Each line is one tool as a server lists it plus its ``server``: ``name``, ``title``,
    ``description``, ``inputSchema``, ``annotations``; an optional ``instructions`` is the
    server's. Names are assigned as for configured servers (``mcp_<server>_<tool>``).

    Raises:
        ConfigError: the file cannot be read or a line is not a tool definition.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from exc
    by_server: dict[str, list[dict[str, Any]]] = {}
    instructions: dict[str, str] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = _record(line, f"{path}:{n}")
        by_server.setdefault(record["server"], []).append(record)
        if isinstance(record.get("instructions"), str):
            instructions[record["server"]] = record["instructions"]
    return _specs(by_server), instructions


def _record(line: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON ({exc.msg})") from exc
    if not (isinstance(data, dict) and isinstance(data.get("server"), str) and data.get("name")):
        raise ConfigError(f'{where}: each line needs "server" and "name" (strings)')
    return data


def _specs(by_server: Mapping[str, list[dict[str, Any]]]) -> list[ToolSpec]:
    from mcp import types

    from lemon_skills.mcp.catalog.build import CatalogEntry, build
    from lemon_skills.mcp.config.entries import Filters
    from lemon_skills.mcp.session.handle import Listing

    fields = ("name", "title", "description", "inputSchema", "annotations")
    entries = []
    for server, records in by_server.items():
        tools = tuple(
            types.Tool.model_validate(
                {"inputSchema": {"type": "object"}}
                | {k: r[k] for k in fields if r.get(k) is not None}
            )
            for r in records
        )
        listing = Listing(tools=tools)
        entries.append(CatalogEntry(server=server, key=server, filters=Filters(), listing=listing))
    return build(entries)[0]


# --- field text -------------------------------------------------------------------------------


def _first_sentence(text: str) -> str:
    text = text.strip()
    end = _SENTENCE_END.search(text)
    return (text[: end.start()] if end else text)[:300]


def _parameters(schema: Mapping[str, Any], depth: int = 0) -> tuple[list[str], list[str]]:
    """Parameter names (as words) and descriptions, one level of nesting deep."""
    names: list[str] = []
    texts: list[str] = []
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return names, texts
    for key, value in props.items():
        names.append(" ".join(tokens.identifier_words(str(key))))
        if not isinstance(value, Mapping):
            continue
        if isinstance(value.get("description"), str):
            texts.append(value["description"])
        if depth == 0:
            for inner in (value, value.get("items")):
                if isinstance(inner, Mapping):
                    more_names, more_texts = _parameters(inner, 1)
                    names += more_names
                    texts += more_texts
    return names, texts
