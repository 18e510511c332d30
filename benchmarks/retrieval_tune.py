"""Tune ranking constants honestly: pick on half A, check on half B, cross-validate the pick.

    python benchmarks/retrieval_tune.py body_df=1,0.5,0.35 coverage_power=0.75,1 [--semantic]

Each ``NAME=V1,V2,...`` is a ``Weights`` field and the values to try; every combination is
run over the bench queries. The objective is recall@1 + recall@3 + 0.5 x none-rejection
- 2 x false-rejection (answering nothing when a skill fits costs more than a wrong order).

Printed: the defaults, the combination best on half A with its numbers on A, B and all
queries, and a 5-fold cross-validation stratified by kind: for each fold the combination
best on the other four folds answers that fold, so the CV row measures the tuning
procedure on queries it did not see. With ``--semantic`` every query's similarity to every
skill is computed once and the semantic constants can be tuned too.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from corpus import bench_dir, bench_entries
from retrieval_eval import split_halves, stratified_folds

from lemon_skills.search.metrics import (
    Case,
    Report,
    evaluate,
    load_cases,
    outcome,
    summarise,
)
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking.index import DEFAULT_WEIGHTS, Weights

#: Weights fields read at build time: changing one needs a new index.
BUILD_FIELDS = {"field_weight", "field_b", "k1", "body_df"}
Answers = dict[str, list[str]]


def objective(r: Report) -> float:
    """What the tuning maximises."""
    return r.recall_at_1 + r.recall_at_3 + 0.5 * r.none_rejection - 2 * r.false_rejection


def _parse(items: Sequence[str]) -> dict[str, list[float]]:
    grid: dict[str, list[float]] = {}
    for item in items:
        name, _, values = item.partition("=")
        if name not in Weights.__dataclass_fields__ or not values:
            sys.exit(f"not NAME=V1,V2 with NAME a Weights field: {item}")
        grid[name] = [float(v) for v in values.split(",")]
    return grid


def _answers(
    entries: Sequence[Any],
    cases: Sequence[Case],
    combos: Sequence[Mapping[str, float]],
    similar: Callable[[str, float], dict[int, float]] | None,
) -> list[Answers]:
    built: dict[tuple[tuple[str, float], ...], ranking.Index] = {}
    out = []
    for combo in combos:
        weights = dataclasses.replace(DEFAULT_WEIGHTS, **combo)
        key = tuple(sorted((k, v) for k, v in combo.items() if k in BUILD_FIELDS))
        if key not in built:
            built[key] = ranking.build_index(entries, weights=weights)
        index = ranking.Index(
            built[key].entries, dataclasses.replace(built[key].core, weights=weights)
        )
        ans = {}
        for c in cases:
            sims = similar(c.query, weights.semantic_floor) if similar else None
            ans[c.query] = [
                m.entry.key for m in ranking.rank(index, c.query, limit=10, similar=sims)
            ]
        out.append(ans)
    return out


def _report(cases: Sequence[Case], ans: Answers) -> Report:
    return evaluate(cases, lambda q: ans[q])


def _fmt(r: Report) -> str:
    return (
        f"R@1 {r.recall_at_1:.3f}  R@3 {r.recall_at_3:.3f}  MRR {r.mrr:.3f}  "
        f"none {r.none_rejection:.3f}  false {r.false_rejection:.3f}"
    )


def _similarity(entries: Sequence[Any], cases: Sequence[Case]) -> Callable[[str, float], dict]:
    from lemon_skills.skills.ranking import semantic

    sim = semantic.Similarity(entries)
    table = {c.query: sim.scores(sim.enc.encode([c.query]))[0] for c in cases}

    def similar(query: str, floor: float) -> dict[int, float]:
        row = table[query]
        top = row.argsort()[::-1][:50]
        return {int(i): float(row[i]) for i in top if row[i] > floor}

    return similar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grid", nargs="+", help="NAME=V1,V2,... (a Weights field)")
    parser.add_argument("--queries", type=Path, default=bench_dir().parent / "queries_dev.jsonl")
    parser.add_argument("--semantic", action="store_true", help="rank with embeddings too")
    args = parser.parse_args()
    grid = _parse(args.grid)
    combos = [dict(zip(grid, v, strict=True)) for v in itertools.product(*grid.values())]
    cases = load_cases(args.queries)
    half_a, half_b = split_halves(cases)
    folds = stratified_folds(cases, 5)
    with bench_entries() as entries:
        similar = _similarity(entries, cases) if args.semantic else None
        answers = _answers(entries, cases, [{}, *combos], similar)
    default, answers = answers[0], answers[1:]
    best = max(range(len(combos)), key=lambda i: objective(_report(half_a, answers[i])))
    held = []
    for i, fold in enumerate(folds):
        train = [c for j, f in enumerate(folds) if j != i for c in f]
        pick = max(range(len(combos)), key=lambda k: objective(_report(train, answers[k])))
        print(f"fold {i + 1}: picks {combos[pick]}")
        held.extend(outcome(c, answers[pick][c.query]) for c in fold)
    print(f"\n{len(combos)} combinations over {len(cases)} queries\n")
    for label, ans in (("defaults", default), (f"best on A {combos[best]}", answers[best])):
        print(label)
        for part, cs in (("A", half_a), ("B", half_b), ("all", cases)):
            print(f"  {part:<4} {_fmt(_report(cs, ans))}")
    print(f"CV(5)  {_fmt(summarise(held))}")


if __name__ == "__main__":
    main()
