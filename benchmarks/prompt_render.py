"""What ``render_prompt`` costs a running host per turn, at several catalogue sizes.

    python benchmarks/prompt_render.py [--sizes 453 10000 50000] [--calls 100] [--turns 20]

For each size a project corpus is made with ``corpus.make_corpus`` and one process loads it
and builds its index (not timed). Then, in that process:

* ``back to back`` - ``render_prompt`` over the first ``--calls`` bench queries in a row: the
  render itself (ranking, catalogue, formatting, the ``skill.prompt_render`` event);
* ``its ranking`` - the ranking a render does (``matches`` for the 20 nearest skills) over
  the same queries, so the difference is what the render adds;
* ``one per turn`` - ``--turns`` renders, each after the registry's stat interval has passed,
  so each also pays the sweep that notices skills edited in place (one stat per SKILL.md).

Wall-clock and CPU milliseconds (p50, p95) of the calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from corpus import bench_root, make_corpus

import lemon_skills
from lemon_skills.search.metrics import load_cases
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.selection import offer, relevance


def _timed(
    queries: list[str], cwd: str, pause: float, rank_only: bool = False
) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for q in queries:
        if pause:
            time.sleep(pause)
        t, c = time.perf_counter(), time.process_time()
        if rank_only:
            relevance.matches(q, cwd=cwd, max_results=offer.NEAR)
        else:
            lemon_skills.render_prompt(q, cwd=cwd)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return sorted(wall), sorted(cpu)


def _line(label: str, figures: tuple[list[float], list[float]]) -> str:
    wall, cpu = figures
    p95 = int(len(wall) * 0.95)
    return (
        f"{label:<14} p50 {statistics.median(wall) * 1000:7.2f} ms  p95 {wall[p95] * 1000:7.2f} ms"
        f"  (cpu p50 {statistics.median(cpu) * 1000:6.2f} ms, {len(wall)} calls)"
    )


def run(size: int, queries: list[str], calls: int, turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        make_corpus(Path(tmp), size)
        relevance.ranking_index(registry.view(tmp, refresh=True))
        lemon_skills.render_prompt("warm up", cwd=tmp)
        print(f"{size:>6} skills  " + _line("back to back", _timed(queries[:calls], tmp, 0.0)))
        ranking = _timed(queries[:calls], tmp, 0.0, rank_only=True)
        print(f"{'':>14}" + _line("its ranking", ranking))
        pause = registry.DEFAULT_STAT_INTERVAL_S + 0.1
        print(f"{'':>14}" + _line("one per turn", _timed(queries[:turns], tmp, pause)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[453, 10_000, 50_000])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    files = sorted(bench_root().glob("queries_dev*.jsonl"))
    queries = [c.query for f in files for c in load_cases(f)]
    for size in args.sizes:
        run(size, queries, args.calls, args.turns)


if __name__ == "__main__":
    main()
