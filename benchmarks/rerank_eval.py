"""A learned re-ranker and abstain classifier over generic match features, cross-validated.

    python benchmarks/rerank_eval.py tools|skills [--semantic] [--folds 10]

For each labelled query the shipped ranker's 30 best documents get a dozen corpus-neutral
features (``_rerank.RANK_FEATURES``: lexical score and its ratio to the best, rank, coverage,
short-field share, plain-IDF evidence, share of the query's words held, in the document's
name, in its group's name (a tool's server), share of the name the query covers, candidates
of the same group, phrase, exact name, embedding similarity). A listwise softmax regression
re-orders them, and a logistic regression over the first match and the query
(``_rerank.ABSTAIN_FEATURES``) decides whether anything fits, its threshold trading a
rejected answerable request at 4 times an answered none-request. Every figure is 10-fold
cross-validation: each fold is answered by models trained on the other nine only. Printed
beside it: the shipped ranker on all queries, and the learned order with the shipped abstain
rule ("reorder only").

With ``--semantic`` (needs the semantic extra and the model) the shipped hybrid is the base
and similarity is a feature. The tool bench is ``<bench>/tools``; the skills are the 453
bench skills with every ``queries_dev*.jsonl``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _rerank as rerank  # noqa: E402
from corpus import bench_entries, bench_root, dev_cases  # noqa: E402

from lemon_skills.mcp.catalog.toolsearch import build_tool_index, load_tool_file, similar_tools  # noqa: E402
from lemon_skills.search import scoring  # noqa: E402
from lemon_skills.search.index import Index  # noqa: E402
from lemon_skills.search.metrics import (  # noqa: E402
    Case,
    Report,
    load_cases,
    outcome,
    stratified_folds,
    summarise,
)

Sims = Sequence[Mapping[int, float] | None]


def line(name: str, r: Report) -> str:
    return (
        f"{name:<26} {r.recall_at_1:.3f}  {r.recall_at_3:.3f}  {r.recall_at_5:.3f}  "
        f"{r.mrr:.3f}  {r.none_rejection:.3f}  {r.false_rejection:.3f}"
    )


def shipped(index: Index, cases: Sequence[Case], sims: Sims) -> Report:
    return summarise(
        [
            outcome(c, [m.key for m in scoring.rank(index, c.query, limit=10, similar=s)])
            for c, s in zip(cases, sims, strict=True)
        ]
    )


def reorder_only(
    index: Index, cases: Sequence[Case], samples: Sequence[rerank.Sample], sims: Sims, k: int
) -> Report:
    """The learned order, answering exactly when the shipped ranker answers."""
    held = []
    for fold in stratified_folds(cases, k):
        inside = set(fold)
        model = rerank.train_ranker([s for i, s in enumerate(samples) if i not in inside])
        for i in fold:
            c = samples[i].candidates
            if c is None or not scoring.rank(index, cases[i].query, limit=1, similar=sims[i]):
                held.append(outcome(cases[i], []))
                continue
            scores = [model(r) for r in c.rows]
            order = sorted(range(len(scores)), key=lambda j: (-scores[j], j))
            held.append(outcome(cases[i], [index.keys[c.docs[j]] for j in order[:10]]))
    return summarise(held)


def run(index: Index, cases: Sequence[Case], sims: Sims, folds: int) -> None:
    names: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
    samples = [
        rerank.sample(index, c, rerank.candidates(index, c.query, similar=s, names=names))
        for c, s in zip(cases, sims, strict=True)
    ]
    reach = sum(1 for s in samples if s.right) / max(1, sum(1 for s in samples if not s.none))
    print(f"{len(index)} documents, {len(cases)} queries; right one in the first 30: {reach:.3f}")
    print(f"{'':<26} R@1    R@3    R@5    MRR    none   false")
    print(line("shipped (all)", shipped(index, cases, sims)))
    print(line(f"learned (CV{folds})", rerank.cross_validate(index, cases, samples, folds)))
    print(line(f"reorder only (CV{folds})", reorder_only(index, cases, samples, sims, folds)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", choices=("tools", "skills"))
    ap.add_argument("--semantic", action="store_true")
    ap.add_argument("--folds", type=int, default=10)
    args = ap.parse_args()
    if args.corpus == "tools":
        bench = bench_root() / "tools"
        specs, ins = load_tool_file(bench / "tools.jsonl")
        cases = load_cases(bench / "queries_dev.jsonl")
        tools = build_tool_index(specs, ins)
        sims: Sims = [None] * len(cases)
        if args.semantic:
            sims = [similar_tools(tools, c.query) for c in cases]
        run(tools.core, cases, sims, args.folds)
        return
    from lemon_skills.skills.ranking import find as ranking
    from lemon_skills.skills.ranking.semantic import Similarity

    cases = dev_cases()
    with bench_entries() as entries:
        index = ranking.build_index(entries).core
        sims = [None] * len(cases)
        if args.semantic:
            sim = Similarity(entries)
            floor = index.weights.semantic_floor
            sims = [sim(c.query, floor=floor) for c in cases]
        run(index, cases, sims, args.folds)


if __name__ == "__main__":
    main()
