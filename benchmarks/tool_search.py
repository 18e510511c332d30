"""find_tools latency at bench size and at 10,000 tools, and what deferred loading sends.

    python benchmarks/tool_search.py [--count 10000] [--budget 200000] [--skip-servers]

Latency: ``find_tools`` over a catalogue already in memory (the state after one discovery),
for every bench query, p50 / p95 in ms, at the corpus size (1,073 tools) and with the corpus
replicated to ``--count`` tools (copies get their server renamed ``<server>-2``...). The
first query on a catalogue builds its index (reported separately); later ones reuse it.

Deferred loading: the 56 bench servers are started as configured stdio servers (each a
stdlib process listing its recorded tools, ``_tool_corpus_server.py``) behind a
``ToolRegistry``. For every bench query, ``select_tools(request=..., budget=..., mode="auto")``
is compared with ``mode="all"``: the share of estimated tokens sent, and recall@5 of the
MCP tools sent (a targeted query is a hit when an expected tool is among them).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import bench_root  # noqa: E402

from lemon_skills.mcp.catalog.build import ToolSpec  # noqa: E402
from lemon_skills.mcp.catalog.toolsearch import find_tools, load_tool_file, tool_key  # noqa: E402
from lemon_skills.search.metrics import Case, load_cases  # noqa: E402

SERVER = Path(__file__).resolve().parent / "_tool_corpus_server.py"


@dataclasses.dataclass
class _Catalogue:
    """What ``find_tools`` reads of a discovered view: specs, instructions, its index memo."""

    specs: list[ToolSpec]
    instructions: dict[str, str]
    search: dict[Any, Any] = dataclasses.field(default_factory=dict)


class _CachedSource:
    """A source whose catalogue is already discovered (no server behind it)."""

    def __init__(self, specs: list[ToolSpec]) -> None:
        self.view = _Catalogue(specs, {})

    def catalogue(self, cwd: object = None) -> _Catalogue:
        return self.view


def replicate(specs: list[ToolSpec], count: int) -> list[ToolSpec]:
    out = list(specs)
    copy = 2
    while len(out) < count:
        for s in specs[: count - len(out)]:
            server = f"{s.server}-{copy}"
            out.append(dataclasses.replace(s, server=server, name=f"mcp_{server}_{s.target}"))
        copy += 1
    return out


def latency(specs: list[ToolSpec], cases: list[Case]) -> tuple[float, float, float]:
    """Index build (first query) seconds, then p50 and p95 ms over every case, twice."""
    source: Any = _CachedSource(specs)
    start = time.perf_counter()
    find_tools("warm up", source=source)
    build = time.perf_counter() - start
    times = []
    for _ in range(2):
        for c in cases:
            t = time.perf_counter()
            find_tools(c.query, source=source)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return build, statistics.median(times), times[int(len(times) * 0.95)]


def deferred(tools_file: Path, cases: list[Case], budget: int) -> None:
    from lemon_skills.mcp.source import McpSource
    from lemon_skills.tools import ToolRegistry

    servers = sorted({line.split('"server": "')[1].split('"')[0] for line in _lines(tools_file)})
    entries = [
        {
            "name": s,
            "command": sys.executable,
            "args": [str(SERVER), "--tools", str(tools_file), "--server", s],
        }
        for s in servers
    ]
    with McpSource(entries, include_config=False) as source:
        registry = ToolRegistry(mcp_source=source)
        everything = registry.select_tools(mode="all")
        view = source.catalogue()
        assert view is not None
        # Configured server names become identifiers (``yahoo-finance`` -> ``yahoo_finance``).
        name_of = {tool_key(s): s.name for s in view.specs}
        name_of |= {
            f"{server}/{spec.target}": spec.name
            for server in servers
            for spec in view.specs
            if spec.server == re.sub(r"[^A-Za-z0-9_]", "_", server)
        }
        shares, hits, targeted = [], 0, 0
        for c in cases:
            sel = registry.select_tools(request=c.query, budget=budget, mode="auto")
            shares.append(sel.tokens_sent / everything.tokens_sent)
            if c.expected:
                targeted += 1
                sent = {t.name for t in sel.tools}
                hits += any(name_of.get(e) in sent for e in c.expected)
        print(
            f"deferred loading: {len(servers)} servers, {len(everything.tools)} tools, "
            f"{everything.tokens_sent} tokens with mode=all; auto at budget {budget}: "
            f"mode={sel.mode}, sent {min(shares):.3%}-{max(shares):.3%} of all "
            f"(mean {statistics.mean(shares):.3%}), recall@5 of the tools sent "
            f"{hits / targeted:.3f}"
        )


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--budget", type=int, default=200_000)
    ap.add_argument("--skip-servers", action="store_true")
    args = ap.parse_args()
    bench = bench_root() / "tools"
    specs, _ = load_tool_file(bench / "tools.jsonl")
    cases = load_cases(bench / "queries_dev.jsonl")
    for size, corpus in ((len(specs), specs), (args.count, replicate(specs, args.count))):
        build, p50, p95 = latency(corpus, cases)
        print(
            f"find_tools at {size} tools: index build {build:.2f} s; "
            f"p50 {p50:.2f} ms, p95 {p95:.2f} ms"
        )
    if not args.skip_servers:
        deferred(bench / "tools.jsonl", cases, args.budget)


if __name__ == "__main__":
    main()
