"""Latency of find_relevant and of building its index, at 453 and 10,000 skills.

    python benchmarks/retrieval_latency.py [--sizes 453 10000] [--rounds 3]

For each size a project corpus is made with ``corpus.make_corpus`` (copies of the bench
skills under new keys), then:

* ``build`` - ``build_index`` over the enabled skills, in memory, nothing tokenised yet
  (median of rounds);
* ``after one edit`` - one SKILL.md changed on disk, then the first ``find_relevant``: the
  registry notices, the index is rebuilt re-reading only that skill (median of rounds);
* ``cache load`` - reading that index back from the on-disk cache (what a new process pays);
* ``query p50 / p95`` - ``lemon_skills.find_relevant`` over every bench query with a warm
  registry and index (what an agent pays per turn), plus the first query that needs the
  typo table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from corpus import bench_dir, make_corpus

import lemon_skills
from lemon_skills.search.metrics import load_cases
from lemon_skills.skills import api
from lemon_skills.skills.ranking import index
from lemon_skills.skills.ranking import snapshot as index_cache
from lemon_skills.skills.ranking.index import build_index, cache_key, dumps, loads


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def run(size: int, queries: list[str], rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        make_corpus(Path(tmp), size)
        view = api.view(tmp, refresh=True)
        entries = view.enabled()
        builds = []
        for _ in range(rounds):
            index._ANALYSED.clear()
            t = time.perf_counter()
            built = build_index(entries)
            builds.append(time.perf_counter() - t)
        data = dumps(built)
        t = time.perf_counter()
        loads(data, entries)
        load_s = time.perf_counter() - t
        path = index_cache.cache_dir() / f"{cache_key(entries)}.idx"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        lemon_skills.find_relevant("warm up", cwd=tmp)
        t = time.perf_counter()
        lemon_skills.find_relevant("deploy kuberntes with helmm", cwd=tmp)
        first_typo = time.perf_counter() - t
        times = []
        for _ in range(rounds):
            for q in queries:
                t = time.perf_counter()
                lemon_skills.find_relevant(q, cwd=tmp)
                times.append(time.perf_counter() - t)
        times.sort()
        edits = []
        skill_file = entries[len(entries) // 2].skill_file
        for i in range(rounds):
            with skill_file.open("a", encoding="utf-8") as fh:
                fh.write(f"\nEdited {i}.\n")
            t = time.perf_counter()
            lemon_skills.find_relevant("merge two pdf files", cwd=tmp, refresh=True)
            edits.append(time.perf_counter() - t)
        p50 = statistics.median(times)
        p95 = times[int(len(times) * 0.95)]
        build = _ms(statistics.median(builds))
        print(f"{size:>6} skills  build {build}  cache {len(data) / 1e6:.1f} MB")
        print(f"{'':>14}cache load {_ms(load_s)}  first typo query {_ms(first_typo)}")
        print(f"{'':>14}find_relevant p50 {_ms(p50)}  p95 {_ms(p95)}  ({len(times)} calls)")
        print(f"{'':>14}first find_relevant after one edit {_ms(statistics.median(edits))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[453, 10_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    queries = [c.query for c in load_cases(bench_dir().parent / "queries_dev.jsonl")]
    for size in args.sizes:
        run(size, queries, args.rounds)


if __name__ == "__main__":
    main()
