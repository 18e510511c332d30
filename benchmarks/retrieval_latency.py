"""Latency of find_relevant and of building its index, at 453 and 10,000 skills.

    python benchmarks/retrieval_latency.py [--sizes 453 10000] [--rounds 3]

For each size a project corpus is made with ``corpus.make_corpus`` (copies of the bench
skills under new keys), then:

* ``build`` - ``build_index`` over the enabled skills, in memory, nothing tokenised yet
  (median of rounds);
* ``after one edit`` - one SKILL.md changed on disk, then the first ``find_relevant`` with no
  refresh asked for (the automatic path an agent takes): the registry notices the change by
  its stat signature and the index is rebuilt re-reading only that skill (median of rounds);
* ``... in a new process`` - the same after the registry and every in-memory token are
  dropped (a new ``lemon skill find``): the index is rebuilt from the cached file's tokens,
  re-reading only the edited skill (median of rounds);
* ``cache load`` - reading that index back from the on-disk cache (what a new process pays);
* ``query p50 / p95`` - ``lemon_skills.find_relevant`` over every bench query with a warm
  registry and index (what an agent pays per turn), plus the first query that needs the
  typo table;
* ``bm25s`` - the same skills indexed and queried with the ``bm25s`` library (if installed),
  in the same run, as the reference for what a sparse-matrix BM25 costs.
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
from lemon_skills.skills import api
from lemon_skills.skills.model import Entry
from lemon_skills.skills.ranking import index
from lemon_skills.skills.ranking import snapshot as index_cache
from lemon_skills.skills.ranking.index import build_index, cache_key, dumps, loads
from lemon_skills.skills.registry import DEFAULT_STAT_INTERVAL_S


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
            # In-place edits are seen by the registry's periodic stat sweep; wait one period.
            time.sleep(DEFAULT_STAT_INTERVAL_S)
            t = time.perf_counter()
            lemon_skills.find_relevant("merge two pdf files", cwd=tmp)
            edits.append(time.perf_counter() - t)
        fresh = []
        for i in range(rounds):
            with skill_file.open("a", encoding="utf-8") as fh:
                fh.write(f"\nEdited again {i}.\n")
            # What a new process has: the cached files on disk, nothing tokenised in memory.
            index._ANALYSED.clear()
            api.refresh()
            t = time.perf_counter()
            lemon_skills.find_relevant("merge two pdf files", cwd=tmp)
            fresh.append(time.perf_counter() - t)
        p50 = statistics.median(times)
        p95 = times[int(len(times) * 0.95)]
        build = _ms(statistics.median(builds))
        print(f"{size:>6} skills  build {build}  cache {len(data) / 1e6:.1f} MB")
        print(f"{'':>14}cache load {_ms(load_s)}  first typo query {_ms(first_typo)}")
        print(f"{'':>14}find_relevant p50 {_ms(p50)}  p95 {_ms(p95)}  ({len(times)} calls)")
        print(f"{'':>14}first find_relevant after one edit {_ms(statistics.median(edits))}")
        print(
            f"{'':>14}same in a new process (registry reloaded, nothing tokenised) "
            f"{_ms(statistics.median(fresh))}"
        )
        _bm25s(entries, queries, rounds)


def _bm25s(entries: list[Entry], queries: list[str], rounds: int) -> None:
    """The same skills and queries through ``bm25s`` (name + description + body, Snowball
    stems), if it is installed: the reference for build and query cost."""
    try:
        import bm25s
        import Stemmer
    except ImportError:
        print(f"{'':>14}bm25s: not installed (pip install bm25s)")
        return
    stemmer = Stemmer.Stemmer("english")
    corpus = [f"{e.key} {e.name} {e.description} {e.body}" for e in entries]
    builds = []
    for _ in range(rounds):
        t = time.perf_counter()
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        builds.append(time.perf_counter() - t)
    times = []
    for q in queries * rounds:
        t = time.perf_counter()
        qt = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        if qt.vocab:
            retriever.retrieve(qt, k=3, show_progress=False)
        times.append(time.perf_counter() - t)
    times.sort()
    print(
        f"{'':>14}bm25s build {_ms(statistics.median(builds))}  "
        f"query p50 {_ms(statistics.median(times))}  p95 {_ms(times[int(len(times) * 0.95)])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[453, 10_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    files = sorted(bench_root().glob("queries_dev*.jsonl"))
    queries = [c.query for f in files for c in load_cases(f)]
    for size in args.sizes:
        run(size, queries, args.rounds)


if __name__ == "__main__":
    main()
