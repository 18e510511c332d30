"""Retrieval quality on the labelled bench queries: our ranker vs plain BM25 vs the original.

    python benchmarks/retrieval_eval.py [--queries FILE ...] [--cv 10] [--semantic]
        [--identifiers SEED] [--json OUT]

The queries are every ``queries_dev*.jsonl`` of the bench (``corpus.bench_root``) unless
``--queries`` names files. The rankers run over the 453 bench skills laid out as a project:

* ``lemon`` - ``lemon_skills.find_relevant`` (the shipped ranker, abstains when nothing fits);
* ``lemon+sem`` - the same with the optional embedding similarity (``--semantic``; needs the
  semantic extra and the model package);
* ``bm25`` - plain BM25 (k1 1.2, b 0.75) over name + description, lower-cased words minus
  stop words, no stemming, never abstains; ``bm25+body`` the same over name + description +
  body;
* ``original`` - the original's keyword scoring, re-implemented from its source (substring
  tests of every 3+ letter word against key/name x40, description x10, body x2, plus the
  whole-context name bonuses), never abstains.

Every metric is given on all queries ("dev": the shipped constants, which were chosen on some
of these queries) and, for our rankers, as k-fold cross-validation of the tunable constants
(``lemon_skills.skills.ranking.tuning``: each fold answered by the setting best on the others),
the figure of record. The rankers without constants to tune have no CV row.

``--identifiers SEED`` appends to every request one ticket id, PR number, port, version, commit
hash, path or URL (``identifiers.py``, seeded), as real requests carry them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from corpus import bench_entries, bench_root
from identifiers import appended

from lemon_skills.search import tokens as text
from lemon_skills.search.metrics import Case, Report, evaluate, load_cases
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find as ranking
from lemon_skills.skills.ranking import tuning
from lemon_skills.skills.ranking.semantic import Similarity

Ranker = Callable[[str], Sequence[str]]


def split_halves(cases: Sequence[Case]) -> tuple[list[Case], list[Case]]:
    """Two halves with the same mix of kinds, fixed by a hash of each query."""
    a: list[Case] = []
    b: list[Case] = []
    kinds = sorted({c.kind for c in cases})
    for kind in kinds:
        group = sorted(
            (c for c in cases if c.kind == kind),
            key=lambda c: hashlib.sha1(c.query.encode()).hexdigest(),
        )
        for i, c in enumerate(group):
            (a if i % 2 == 0 else b).append(c)
    return a, b


def stratified_folds(cases: Sequence[Case], k: int) -> list[list[Case]]:
    """``k`` folds with the same mix of kinds, fixed by a hash of each query."""
    folds: list[list[Case]] = [[] for _ in range(k)]
    for kind in sorted({c.kind for c in cases}):
        group = sorted(
            (c for c in cases if c.kind == kind),
            key=lambda c: hashlib.sha1(c.query.encode()).hexdigest(),
        )
        for i, c in enumerate(group):
            folds[i % k].append(c)
    return folds


# --- plain BM25 over name + description ------------------------------------------------------

_PLAIN = re.compile(r"[a-z0-9]+")


def _plain_tokens(s: str) -> list[str]:
    return [t for t in _PLAIN.findall(s.lower()) if t not in text.STOP_WORDS]


def bm25_ranker(
    entries: Sequence[Entry], *, k1: float = 1.2, b: float = 0.75, body: bool = False
) -> Ranker:
    """Classic BM25 over ``key name description`` (and the body); top 10, never abstains."""
    docs = [
        Counter(_plain_tokens(f"{e.key} {e.name} {e.description} {e.body if body else ''}"))
        for e in entries
    ]
    lengths = [sum(d.values()) for d in docs]
    avg = sum(lengths) / len(lengths)
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    n = len(docs)
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def rank(query: str) -> list[str]:
        terms = set(_plain_tokens(query))
        scored = []
        for i, (d, length) in enumerate(zip(docs, lengths, strict=True)):
            s = 0.0
            for t in terms:
                tf = d.get(t, 0)
                if tf:
                    s += idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
            if s > 0:
                scored.append((-s, entries[i].key))
        scored.sort()
        return [k for _, k in scored[:10]]

    return rank


# --- the original's algorithm ----------------------------------------------------------------

_ORIG_SPLIT = re.compile(r"[^A-Za-z0-9_]+")


def original_ranker(entries: Sequence[Entry]) -> Ranker:
    """The original ``find_relevant`` scoring, exactly as its source computes it.

    Ties keep input order; the original's order for more than 32 skills is hash order, so
    key order is used here (a neutral choice that favours no ranker).
    """
    prepared = [
        (
            e,
            e.key.lower(),
            (e.name or e.key).lower(),
            e.description.lower(),
            e.body[:10_000].lower(),
        )
        for e in entries
    ]

    def rank(context: str) -> list[str]:
        ctx = context.lower()
        words = list(dict.fromkeys(w for w in _ORIG_SPLIT.split(ctx) if len(w) > 2))
        scored = []
        for e, key_l, name_l, desc_l, body_l in prepared:
            exact = 100 if ctx in (key_l, name_l) else 0
            partial = 50 if not exact and (ctx in key_l or ctx in name_l) else 0
            inside = 30 if key_l in ctx or name_l in ctx else 0
            name_score = max(exact, partial, inside) + 40 * sum(
                1 for w in words if w in key_l or w in name_l
            )
            desc_score = 10 * sum(1 for w in words if w in desc_l)
            body_score = 2 * sum(1 for w in words if w in body_l)
            score = name_score + desc_score + body_score
            if score > 0:
                scored.append((score + (1000 if e.source == "project" else 0), e.key))
        scored.sort(key=lambda s: -s[0])  # stable: ties keep input (key) order
        return [k for _, k in scored[:10]]

    return rank


# --- report ----------------------------------------------------------------------------------


def _semantic(index: ranking.Index) -> tuple[Ranker, Similarity]:
    sim = Similarity(index.entries, core=index.core)
    floor = index.weights.semantic_floor

    def rank(q: str) -> list[str]:
        return [m.entry.key for m in ranking.rank(index, q, limit=10, similar=sim(q, floor=floor))]

    return rank, sim


def _row(name: str, r: Report) -> str:
    return (
        f"| {name:<16} | {r.recall_at_1:.3f} | {r.recall_at_3:.3f} | {r.mrr:.3f} "
        f"| {r.none_rejection:.3f} | {r.false_rejection:.3f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=Path, action="append", default=None)
    parser.add_argument("--cv", type=int, default=10, help="folds of the cross-validation")
    parser.add_argument("--json", type=Path, default=None, help="also write all numbers here")
    parser.add_argument("--semantic", action="store_true", help="also rank with embeddings")
    parser.add_argument(
        "--identifiers", type=int, default=None, metavar="SEED", help="append an identifier"
    )
    args = parser.parse_args()
    files = args.queries or sorted(bench_root().glob("queries_dev*.jsonl"))
    cases = [c for f in files for c in load_cases(f)]
    if args.identifiers is not None:
        cases = [c for c, _ in appended(cases, args.identifiers)]
    with bench_entries() as entries:
        index = ranking.build_index(entries)
        rankers: dict[str, Ranker] = {
            "lemon": lambda q: [m.entry.key for m in ranking.rank(index, q, limit=10)]
        }
        sim = None
        if args.semantic:
            rankers["lemon+sem"], sim = _semantic(index)
        rankers["bm25"] = bm25_ranker(entries)
        rankers["bm25+body"] = bm25_ranker(entries, body=True)
        rankers["original"] = original_ranker(entries)
        results = {f"{name} (dev)": evaluate(cases, fn) for name, fn in rankers.items()}
        results["lemon CV"] = tuning.cross_validate(entries, cases, folds=args.cv).cv.report
        if sim is not None:
            tuned = tuning.cross_validate(entries, cases, folds=args.cv, similarity=sim)
            results["lemon+sem CV"] = tuned.cv.report
    names = ", ".join(f.name for f in files)
    extra = "" if args.identifiers is None else f", identifiers appended (seed {args.identifiers})"
    print(f"{len(entries)} skills, {len(cases)} queries ({names}){extra}, CV = {args.cv} folds\n")
    print("| ranker           | R@1   | R@3   | MRR   | none-rej | false-rej |")
    print("|------------------|-------|-------|-------|----------|-----------|")
    order = sorted(results, key=lambda n: (not n.startswith("lemon"), "sem" in n, n))
    for name in order:
        print(_row(name, results[name]))
    print("\n### recall@1 per kind (none: none-rejection)\n")
    kinds = [k.kind for k in results["lemon (dev)"].per_kind]
    print("| ranker           | " + " | ".join(f"{k:<10}" for k in kinds) + " |")
    print("|------------------|" + "|".join("-" * 12 for _ in kinds) + "|")
    for name in order:
        cells = []
        for k in results[name].per_kind:
            v = k.none_rejection if k.recall_at_1 is None else k.recall_at_1
            cells.append(f"{v:<10.3f}")
        print(f"| {name:<16} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({n: r.to_dict() for n, r in results.items()}, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
