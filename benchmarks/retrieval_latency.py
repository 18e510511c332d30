"""Latency and memory of find_relevant and its index beside ``bm25s``, on one tree per size.

    python benchmarks/retrieval_latency.py [--sizes 453 10000] [--rounds 3] [--cli]
        [--no-baseline] [--new-process-only]

For each size a project corpus is made with ``corpus.make_corpus`` (copies of the bench
skills under new keys), then, in this order:

* ``build`` - ``build_index`` over the enabled skills in memory (median of rounds), beside
  ``bm25s`` tokenising and indexing the same skills (name + description + body, Snowball
  stems) in the same run, if it is installed;
* ``find p50 / p95`` - ``lemon_skills.find_relevant`` over every bench query with a warm
  registry and index (what an agent pays per turn), beside a ``bm25s`` query;
* ``new process`` - a new Python process running one ``find_relevant`` with the cached
  index on disk: the call's time, of which loading the registry, reading (and after an edit
  updating and writing back) the index and the query, the same in CPU seconds, and the
  process's peak RSS; then the same after one SKILL.md was edited (the automatic path: no
  refresh asked for), the median of rounds, each round a new edit; then after one edit with
  the update forced to be merged into the cache file, as it is once the changes since the
  file was written pass an eighth of it;
* ``render_prompt p50 / p95`` - ``lemon_skills.render_prompt`` over every bench query,
  warm (what a host pays per turn for the skills block);
* with ``--cli``: whole ``lemon`` processes: ``lemon skill list`` and ``lemon prompt`` on a
  fresh tree (no manifest cache, no index: from 2,000 skills the prompt answers from an
  index focused on its request), ``lemon skill index`` (the full index that prompt leaves
  to a background process), then both with caches present, each pair run ``rounds`` times
  interleaved and printed with its ratio, and ``lemon skill find`` with no edit against
  after one edit.

Wall-clock figures; ``cpu`` columns are CPU seconds of the process (this one, or the child),
which a busy machine inflates less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from corpus import bench_root, make_corpus

import lemon_skills
from lemon_skills.search.metrics import load_cases
from lemon_skills.skills import api
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking.index import build_index

CHILD = """
import json, sys, time
def peak_mb():
    # VmHWM, not ru_maxrss: Linux carries the parent's peak into ru_maxrss across exec.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0
t0 = time.perf_counter(); c0 = time.process_time()
import lemon_skills
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.selection import relevance
if sys.argv[3:] == ["merge"]:
    # What an update pays when its changes pass the share a delta may hold.
    from lemon_skills.search import postings
    postings.OVERLAY_SHARE = 10**9
t1 = time.perf_counter(); c1 = time.process_time()
v = registry.view(sys.argv[1])
t2 = time.perf_counter(); c2 = time.process_time()
relevance.ranking_index(v)
t3 = time.perf_counter(); c3 = time.process_time()
found = lemon_skills.find_relevant(sys.argv[2], cwd=sys.argv[1])
t4 = time.perf_counter(); c4 = time.process_time()
print(json.dumps({"import": t1 - t0, "registry": t2 - t1, "index": t3 - t2,
                  "query": t4 - t3, "find": t4 - t1, "cpu": c4 - c0,
                  "cpu_registry": c2 - c1, "cpu_index": c3 - c2, "cpu_query": c4 - c3,
                  "cpu_find": c4 - c1, "rss_mb": peak_mb()}))
"""


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.2f} ms"


def _timed(call: Callable[[str], object], items: Iterable[str]) -> tuple[list[float], list[float]]:
    """Wall seconds (sorted) and CPU seconds of ``call`` on each of ``items``."""
    wall, cpu = [], []
    for item in items:
        t, c = time.perf_counter(), time.process_time()
        call(item)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    wall.sort()
    return wall, cpu


def _spread(wall: list[float], cpu: list[float]) -> str:
    """p50 and p95 of sorted ``wall`` times, and the CPU p50, as the tables print them."""
    return (
        f"p50 {_ms(statistics.median(wall))}  p95 {_ms(wall[int(len(wall) * 0.95)])}"
        f"  (cpu p50 {_ms(statistics.median(cpu))}"
    )


def _child(tree: Path, query: str, *extra: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), query, *extra],
        check=True,
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    return dict(json.loads(out.stdout))


def _edit(entries: list[Entry], i: int) -> None:
    skill_file = entries[(len(entries) // 2 + i) % len(entries)].skill_file
    with skill_file.open("a", encoding="utf-8") as fh:
        fh.write(f"\nEdited {i}.\n")


def run(size: int, queries: list[str], rounds: int, cli: bool, baseline: bool, warm: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        tree = Path(tmp)
        make_corpus(tree, size)
        if cli:
            _cli(tree, queries[0], rounds)
        view = api.view(tmp, refresh=True)
        entries = list(view.enabled())
        print(f"{size:>6} skills")
        if warm:
            _build(entries, rounds)
        lemon_skills.find_relevant("warm up", cwd=tmp)  # writes the cached index
        if warm:
            times, cpu = _timed(lambda q: lemon_skills.find_relevant(q, cwd=tmp), queries * rounds)
            print(f"{'':>14}find_relevant {_spread(times, cpu)}, {len(times)} calls, warm)")
            times, cpu = _timed(lambda q: lemon_skills.render_prompt(q, cwd=tmp), queries)
            print(f"{'':>14}render_prompt {_spread(times, cpu)}, {len(times)} calls, warm)")
        if baseline and warm:
            _bm25s(entries, queries, rounds)
        query = "merge two pdf files"
        plain = [_child(tree, query) for _ in range(rounds)]
        edited, merged = [], []
        for i in range(rounds):
            _edit(entries, i)
            edited.append(_child(tree, query))
        for i in range(rounds):
            _edit(entries, rounds + i)
            merged.append(_child(tree, query, "merge"))
        for label, rows in (
            ("new process, no edit", plain),
            ("new process, one edit", edited),
            ("new process, one edit merged into the file", merged),
        ):
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(
                f"{'':>14}{label}: find_relevant {_ms(med['find'])} (registry "
                f"{_ms(med['registry'])}, index {_ms(med['index'])}, query {_ms(med['query'])})"
                f"  peak RSS {med['rss_mb']:.0f} MB  cpu {med['cpu']:.2f} s\n"
                f"{'':>16}cpu of find_relevant {_ms(med['cpu_find'])} (registry "
                f"{_ms(med['cpu_registry'])}, index {_ms(med['cpu_index'])}, "
                f"query {_ms(med['cpu_query'])}; the process's cpu includes the import)"
            )
        files = list((Path(tmp) / "agent" / "cache" / "ranking").glob("*.idx"))
        size_mb = sum(f.stat().st_size for f in files) / 1e6
        print(f"{'':>14}cached index files: {len(files)} ({size_mb:.1f} MB)")


def _build(entries: list[Entry], rounds: int) -> None:
    builds, cpus = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        build_index(entries)
        builds.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    print(f"{'':>14}build {_ms(statistics.median(builds))}  (cpu {_ms(statistics.median(cpus))})")


def _bm25s(entries: list[Entry], queries: list[str], rounds: int) -> None:
    """The same skills and queries through ``bm25s`` (name + description + body, Snowball
    stems), if it is installed: the reference for build and query cost."""
    try:
        import bm25s
        import Stemmer
    except ImportError:
        print(f"{'':>14}bm25s: not installed (pip install -e '.[bench]')")
        return
    stemmer = Stemmer.Stemmer("english")
    corpus = [f"{e.key} {e.name} {e.description} {e.body}" for e in entries]
    builds, cpus = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        builds.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)

    def query(q: str) -> None:
        qt = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        if qt.vocab:
            retriever.retrieve(qt, k=3, show_progress=False)

    times, cpu = _timed(query, queries * rounds)
    print(
        f"{'':>14}bm25s build {_ms(statistics.median(builds))}"
        f"  (cpu {_ms(statistics.median(cpus))})  query {_spread(times, cpu)})"
    )


def _lemon(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``lemon`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "lemon_skills", *args], env=env, check=True, capture_output=True
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli(tree: Path, request: str, rounds: int) -> None:
    """Whole ``lemon`` processes as a user runs them (text output), each pair interleaved
    ``rounds`` times so that a change in the machine's load hits both sides of a ratio."""
    # The index a first prompt leaves to a background process is built here in the open and
    # timed, so no build outlives its round or lands in the next round's fresh tree.
    env = dict(os.environ, LEMON_BACKGROUND_INDEX="0")
    agent = Path(env["LEMON_AGENT_DIR"])
    cwd = ["--cwd", str(tree)]
    listing = ["skill", "list", *cwd]
    prompt = ["prompt", request, *cwd]

    def fresh() -> None:
        shutil.rmtree(agent, ignore_errors=True)

    def pair(label: str, a: list[str], b: list[str], cold: bool) -> None:
        rows: list[tuple[float, float, float, float]] = []
        for _ in range(rounds):
            if cold:
                fresh()
            first = _lemon(a, env)
            if cold:
                fresh()
            rows.append((*first, *_lemon(b, env)))
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        print(
            f"{'':>14}{label}: list wall {med[0]:6.2f} s cpu {med[1]:6.2f} s;"
            f" prompt wall {med[2]:6.2f} s cpu {med[3]:6.2f} s;"
            f" prompt/list {med[2] / med[0]:4.2f}x wall, {med[3] / med[1]:4.2f}x cpu"
            f" (median of {rounds})"
        )

    def show(label: str, figures: tuple[float, float]) -> None:
        print(f"{'':>14}{label:<44} wall {figures[0]:7.2f} s  cpu {figures[1]:7.2f} s")

    pair("fresh tree (no cache)", listing, prompt, cold=True)
    show("lemon skill index (the background build)", _lemon(["skill", "index", *cwd], env))
    pair("caches present", listing, prompt, cold=False)
    show("lemon skill find, no edit", _lemon(["skill", "find", request, *cwd], env))
    skill = sorted((tree / ".lemon" / "skill").iterdir())[0] / "SKILL.md"
    with skill.open("a", encoding="utf-8") as fh:
        fh.write("\nEdited.\n")
    show("lemon skill find, after one edit", _lemon(["skill", "find", request, *cwd], env))
    fresh()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[453, 10_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="also time whole lemon processes")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip bm25s (its build takes minutes at 50k)"
    )
    parser.add_argument(
        "--new-process-only",
        action="store_true",
        help="only the new-process figures (no timed build, no warm queries, no bm25s)",
    )
    args = parser.parse_args()
    files = sorted(bench_root().glob("queries_dev*.jsonl"))
    queries = [c.query for f in files for c in load_cases(f)]
    for size in args.sizes:
        run(size, queries, args.rounds, args.cli, not args.no_baseline, not args.new_process_only)


if __name__ == "__main__":
    main()
