"""Query-side term weighting variants, measured by cross-validation against the shipped ranker.

    python benchmarks/retrieval_variants.py [--folds 10]

Each variant rewrites the analysed query (``lemon_skills.search.scoring.analyse``) before
ranking, so the index and every other signal stay as shipped:

* ``idf^p`` - each query word weighted by (its plain IDF / the rarest IDF) ** p, in the score,
  the coverage credit and the query's mass: rare words count more, common ones less;
* ``generic>t:g`` - words held by more than a share t of the skills weighted g;
* ``unknown:u`` - words no skill holds count u (not 1) towards the query's mass;
* ``body cap N`` - bodies indexed up to N characters instead of ``BODY_CHARS`` (an index-side
  variant, for the question whether a word late in a long body should be found).

The tunable constants are cross-validated for each variant as in ``lemon skill eval --cv``
(``skills/ranking/tuning.py``), so a variant that needs another bar gets it.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable

from corpus import bench_entries, dev_cases

from lemon_skills.search import scoring
from lemon_skills.search.index import Index
from lemon_skills.search.metrics import Report
from lemon_skills.skills.ranking import index as skill_index
from lemon_skills.skills.ranking import tuning

Rewrite = Callable[[Index, scoring.Query], scoring.Query]


def _scaled(index: Index, q: scoring.Query, factor: Callable[[str], float]) -> scoring.Query:
    terms = []
    mass = q.mass
    for qt in q.terms:
        f = factor(qt.term)
        terms.append(dataclasses.replace(qt, weight=qt.weight * f))
        mass -= (1 - f) * qt.credit
    return dataclasses.replace(q, terms=tuple(terms), mass=max(mass, 1e-9))


def idf_power(p: float) -> Rewrite:
    def rewrite(index: Index, q: scoring.Query) -> scoring.Query:
        rare = index.idf_of_unknown()
        return _scaled(index, q, lambda t: (index.plain_idf[t] / rare) ** p)

    return rewrite


def generic(share: float, weight: float) -> Rewrite:
    def rewrite(index: Index, q: scoring.Query) -> scoring.Query:
        n = len(index)
        return _scaled(
            index, q, lambda t: weight if len(index.postings[t].docs) > share * n else 1.0
        )

    return rewrite


def unknown(u: float) -> Rewrite:
    def rewrite(index: Index, q: scoring.Query) -> scoring.Query:
        unknown_mass = (q.content - q.words) * index.idf_of_unknown()
        return dataclasses.replace(q, mass=max(q.mass - (1 - u) * unknown_mass, 1e-9))

    return rewrite


VARIANTS: dict[str, Rewrite | None] = {
    "shipped": None,
    "idf^0.25": idf_power(0.25),
    "idf^0.5": idf_power(0.5),
    "idf^1": idf_power(1.0),
    "generic>0.3:0.5": generic(0.3, 0.5),
    "generic>0.15:0.5": generic(0.15, 0.5),
    "generic>0.08:0.5": generic(0.08, 0.5),
    "unknown:0.5": unknown(0.5),
    "unknown:0": unknown(0.0),
}


def _fmt(r: Report) -> str:
    return (
        f"{r.recall_at_1:.3f} / {r.recall_at_3:.3f} / {r.none_rejection:.3f} / "
        f"{r.false_rejection:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=10)
    args = parser.parse_args()
    cases = dev_cases()
    shipped = scoring.analyse
    print(f"{len(cases)} queries, CV = {args.folds} folds; R@1 / R@3 / none-rej / false-rej\n")
    print("| variant | CV |")
    print("|---|---|")
    with bench_entries() as entries:
        for name, rewrite in VARIANTS.items():
            if rewrite is not None:

                def analyse(
                    index: Index, query: str, *, plain: bool = False, rw: Rewrite = rewrite
                ) -> scoring.Query:
                    return rw(index, shipped(index, query, plain=plain))

                scoring.analyse = analyse  # type: ignore[assignment]
            try:
                report = tuning.cross_validate(entries, cases, folds=args.folds).cv.report
            finally:
                scoring.analyse = shipped  # type: ignore[assignment]
            print(f"| {name} | {_fmt(report)} |", flush=True)
        shipped_cap = skill_index.BODY_CHARS
        for cap in (30_000, 100_000):
            skill_index.BODY_CHARS = cap
            try:
                report = tuning.cross_validate(entries, cases, folds=args.folds).cv.report
            finally:
                skill_index.BODY_CHARS = shipped_cap
            print(f"| body cap {cap} | {_fmt(report)} |", flush=True)


if __name__ == "__main__":
    main()
