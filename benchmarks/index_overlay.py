"""What an updated index costs a query: the overlay an edit leaves against the same rows merged.

    python benchmarks/index_overlay.py [--size 10000] [--edits 1 10 100] [--rounds 3]

A project of ``--size`` copies of the bench skills is indexed once; then, for each count of
``--edits``, that many more skills get a new line and the index is updated from the first one (as
the cache does: an overlay of the stored rows), and every bench query is ranked against the
overlay and against the same rows merged, interleaved in one process, CPU time per query.
The two rank identically (``tests/search/test_index.py``); this measures only what the
overlay's per-term renumbering and merge cost.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from corpus import bench_root, make_corpus

from lemon_skills.search import index as search_index
from lemon_skills.search.metrics import load_cases
from lemon_skills.search.store import Store
from lemon_skills.skills import api
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking.index import Index, build_index, update_index


def _merged(index: Index) -> Index:
    core, store = index.core, index.core.store
    assert store is not None
    plain = Store(store.rows.plain(), store.terms, store.ids, store.lengths, store.docs)
    merged = search_index.assemble(
        core.keys, core.priority, plain, core.names, core.lexicon, core.weights
    )
    return Index(index.entries, merged)


def _p50(times: list[float]) -> str:
    times.sort()
    p95 = times[int(len(times) * 0.95)]
    return f"p50 {statistics.median(times) * 1000:.2f} ms  p95 {p95 * 1000:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--edits", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    files = sorted(bench_root().glob("queries_dev*.jsonl"))
    queries = [c.query for f in files for c in load_cases(f)]
    with tempfile.TemporaryDirectory() as tmp:
        skills = make_corpus(Path(tmp), args.size)
        entries = api.view(tmp, refresh=True).enabled()
        base = build_index(entries)
        for edits in args.edits:
            for i, skill in enumerate(sorted(skills.iterdir())[:: args.size // edits][:edits]):
                with (skill / "SKILL.md").open("a", encoding="utf-8") as fh:
                    fh.write(f"\nEdited {edits}.{i}.\n")
            edited = api.view(tmp, refresh=True).enabled()
            overlay = update_index(base.core, edited, merge=False)
            merged = _merged(overlay)
            times: dict[str, list[float]] = {"overlay": [], "merged": []}
            for _ in range(args.rounds):
                for q in queries:
                    for label, index in (("overlay", overlay), ("merged", merged)):
                        c = time.process_time()
                        ranking.rank(index, q)
                        times[label].append(time.process_time() - c)
            print(
                f"{args.size} skills, {edits:>4} edited: overlay {_p50(times['overlay'])};"
                f"  merged {_p50(times['merged'])}  (CPU, {len(times['merged'])} queries each)"
            )


if __name__ == "__main__":
    main()
