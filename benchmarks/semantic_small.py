"""Centred against raw embedding similarity in small catalogues, where the catalogue's mean
skill vector is a noisy estimate of what skills share.

    python benchmarks/semantic_small.py [--sizes 2 5 10 25 50 100] [--seeds 3]

For each catalogue size n and seed, every labelled request is ranked over a catalogue of n bench
skills: its right skills plus random others (a none-request: n random skills), with the lexical
index and the centre both built from those n skills alone, as a project holding them would.
Printed per size: R@1 / R@3 / none-rejection / false-rejection of the lexical ranker, of the
hybrid with raw cosine (weight 3, floor 0.1, bar 0.8: the setting CV chose for it) and with
centred vectors (weight 3, floor 0.1, bar 0.7: the setting CV chose for it). Nothing is tuned
here.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from corpus import bench_entries, dev_cases
from retrieval_blends import _fmt as fmt

from lemon_skills.search.embed import centre, centred, vectors
from lemon_skills.search.metrics import Case, outcome, summarise
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find
from lemon_skills.skills.ranking.index import DEFAULT_WEIGHTS
from lemon_skills.skills.ranking.semantic import doc_vectors, encoder

RAW = dataclasses.replace(DEFAULT_WEIGHTS, semantic_min_score=0.8)
CENTRED = dataclasses.replace(DEFAULT_WEIGHTS, semantic_min_score=0.7)


def similar(docs: Any, q: Any, floor: float, top: int = 50) -> dict[int, float]:
    sims = docs @ q
    best = np.argsort(-sims)[:top]
    return {int(i): float(sims[i]) for i in best if sims[i] > floor}


def catalogue(case: Case, keys: Sequence[str], n: int, rng: random.Random) -> list[int]:
    """Skill numbers of an ``n``-skill catalogue holding ``case``'s right skills."""
    right = [keys.index(k) for k in case.expected if k in keys][:n]
    others = [i for i in range(len(keys)) if i not in right]
    return right + rng.sample(others, n - len(right))


def answers(
    entries: Sequence[Entry], docs: Any, qvec: Any, query: str, rows: list[int]
) -> dict[str, list[str]]:
    sub = [entries[i] for i in rows]
    out = {}
    lexical = find.build_index(sub, weights=RAW)
    out["lexical"] = [m.entry.key for m in find.rank(lexical, query, limit=3)]
    raw = similar(docs[rows], qvec, RAW.semantic_floor)
    out["raw"] = [m.entry.key for m in find.rank(lexical, query, limit=3, similar=raw)]
    index = find.build_index(sub, weights=CENTRED)
    matrix, mean = centred(docs[rows])
    cen = similar(matrix, centre(qvec, mean), CENTRED.semantic_floor)
    out["centred"] = [m.entry.key for m in find.rank(index, query, limit=3, similar=cen)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 5, 10, 25, 50, 100])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    cases = dev_cases()
    with bench_entries() as entries:
        pass  # the scan read what this needs (names, descriptions)
    enc = encoder()
    keys = [e.key for e in entries]
    docs = doc_vectors(entries, enc)
    qvecs = vectors([c.query for c in cases], enc)
    print(f"{len(cases)} requests x {args.seeds} seeds per size; R@1 / R@3 / none-rej / false-rej")
    print("\n| skills | lexical | hybrid, raw cosine | hybrid, centred |")
    print("|---|---|---|---|")
    for n in args.sizes:
        got: dict[str, list[Any]] = {"lexical": [], "raw": [], "centred": []}
        for seed in range(args.seeds):
            rng = random.Random(f"{n}:{seed}")
            for c, q in zip(cases, qvecs, strict=True):
                rows = catalogue(c, keys, n, rng)
                for name, found in answers(entries, docs, q, c.query, rows).items():
                    got[name].append(outcome(c, found))
        r = {name: summarise(o) for name, o in got.items()}
        print(f"| {n} | {fmt(r['lexical'])} | {fmt(r['raw'])} | {fmt(r['centred'])} |", flush=True)


if __name__ == "__main__":
    main()
