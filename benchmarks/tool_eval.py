"""Tool retrieval on the tool bench: find_tools' ranker vs plain BM25, with 10-fold CV.

    python benchmarks/tool_eval.py [--folds 10] [--semantic [--centred]] [--identifiers SEED]
        [--json OUT]

Over ``<bench>/tools/tools.jsonl`` (1,073 tool definitions of 56 servers) and
``queries_dev.jsonl`` (220 labelled requests), it prints recall@1/@3/@5, MRR, none-rejection
and false-rejection of:

* ``bm25`` - plain BM25 (k1 1.2, b 0.75) over the tool name and description, lower-cased
  words minus stop words, no stemming; it never abstains;
* ``bm25+cutoff`` - the same answering only when the best score reaches a cutoff;
* ``lemon`` - ``lemon_skills.mcp.catalog.toolsearch`` with its shipped ``WEIGHTS``;
* ``lemon+sem`` - the same with embedding similarity (``--semantic``; needs the semantic
  extra and the model package), its blend weight, floor and bar cross-validated;
* ``lemon+sem centred`` - the same with every vector centred on the tools' mean vector, as
  skills are ranked (``--centred``; not shipped for tools: it measured worse).

Each is given on all queries and as k-fold cross-validation of its tuning: the queries are cut
into folds with the same mix of kinds, and each fold is answered by the candidate setting that
scores best on the other folds (``lemon_skills.search.metrics.cross_validate``). The lemon
grid varies the field weights of name and server and the abstain rules (``min_score``,
``min_words``); the cutoff grid the BM25 cutoff. Plain BM25 has nothing to tune, so its CV
figure is its figure. ``--identifiers SEED`` appends to every request a ticket id, PR number,
port, version, commit hash, path or URL (``identifiers.py``, seeded).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import bench_root  # noqa: E402
from identifiers import appended  # noqa: E402

from lemon_skills.mcp.catalog.build import ToolSpec  # noqa: E402
from lemon_skills.mcp.catalog.toolsearch import (  # noqa: E402
    WEIGHTS,
    ToolIndex,
    build_tool_index,
    load_tool_file,
    rank_tools,
    similar_tools,
    tool_key,
    tool_text,
)
from lemon_skills.search import Weights, embed, scoring, tokens  # noqa: E402
from lemon_skills.search.index import reweigh  # noqa: E402
from lemon_skills.search.metrics import Case, Report, cross_validate, evaluate, load_cases  # noqa: E402

Ranker = Callable[[str], Sequence[str]]
DEPTH = 10


def score_tools(r: Report) -> float:
    """What tuning maximises here: the three recalls, half the none-rejection, minus twice the
    false-rejection (answering nothing when a tool fits costs the agent the task)."""
    return (
        r.recall_at_1
        + r.recall_at_3
        + r.recall_at_5
        + 0.5 * r.none_rejection
        - 2 * r.false_rejection
    )


# --- plain BM25 over name + description ------------------------------------------------------

_PLAIN = re.compile(r"[a-z0-9]+")


def _plain_tokens(s: str) -> list[str]:
    return [t for t in _PLAIN.findall(s.lower()) if t not in tokens.STOP_WORDS]


def bm25_scores(specs: Sequence[ToolSpec], *, k1: float = 1.2, b: float = 0.75):  # type: ignore[no-untyped-def]
    """``query -> [(score, key)]`` best first, top ``DEPTH``; never empty unless no word hits."""
    docs = [Counter(_plain_tokens(f"{s.target} {s.description}")) for s in specs]
    lengths = [sum(d.values()) for d in docs]
    avg = sum(lengths) / len(lengths)
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    n = len(docs)
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def scores(query: str) -> list[tuple[float, str]]:
        terms = set(_plain_tokens(query))
        out = []
        for spec, d, length in zip(specs, docs, lengths, strict=True):
            s = sum(
                idf[t] * d[t] * (k1 + 1) / (d[t] + k1 * (1 - b + b * length / avg))
                for t in terms
                if t in d
            )
            if s > 0:
                out.append((s, tool_key(spec)))
        out.sort(key=lambda p: -p[0])
        return out[:DEPTH]

    return scores


# --- candidates ------------------------------------------------------------------------------


def lemon_grid() -> list[Weights]:
    """The shipped weights first (ties go to the earlier candidate), then the grid."""
    grid = [WEIGHTS]
    for name, server, bar in itertools.product((3.0, 5.0), (2.0, 4.0), (0.25, 0.35, 0.45)):
        fw = dict(WEIGHTS.field_weight) | {"name": name, "server": server}
        candidate = dataclasses.replace(WEIGHTS, field_weight=fw, min_score=bar)
        if candidate != WEIGHTS:
            grid.append(candidate)
    return grid


def lemon_answers(
    cases: Sequence[Case], specs: Sequence[ToolSpec], ins: dict[str, str], w: Weights
) -> list[list[str]]:
    index = build_tool_index(specs, ins, weights=w)
    return [[tool_key(m.spec) for m in rank_tools(index, c.query, limit=DEPTH)] for c in cases]


def semantic_grid() -> list[Weights]:
    """The shipped semantic constants first, then the grid around them."""
    grid = [WEIGHTS]
    for weight, floor, bar in itertools.product((3.0, 5.0, 8.0), (0.1, 0.2, 0.3), (0.25, 0.5, 0.8)):
        candidate = dataclasses.replace(
            WEIGHTS, semantic_weight=weight, semantic_floor=floor, semantic_min_score=bar
        )
        if candidate != WEIGHTS:
            grid.append(candidate)
    return grid


def semantic_answers(
    cases: Sequence[Case], index: ToolIndex, grid: Sequence[Weights], *, centred: bool = False
) -> list[list[list[str]]]:
    """Each grid setting's answers, the query similarities computed once (lowest floor);
    ``centred``: every vector centred on the tools' mean vector, as skills are ranked."""
    low = dataclasses.replace(WEIGHTS, semantic_floor=min(w.semantic_floor for w in grid))
    probe = ToolIndex(index.specs, reweigh(index.core, low), index.memo)
    if centred:
        enc = embed.encoder()
        matrix, mean = embed.centred(embed.vectors([tool_text(t) for t in index.specs], enc))
        floor = low.semantic_floor
        sims = [embed.top_similar(matrix, c.query, enc, floor=floor, mean=mean) for c in cases]
    else:
        sims = [similar_tools(probe, c.query) for c in cases]
    out = []
    for w in grid:
        core = reweigh(index.core, w)
        out.append(
            [
                [
                    index.core.keys[m.doc]
                    for m in scoring.rank(
                        core,
                        c.query,
                        limit=DEPTH,
                        similar={d: v for d, v in s.items() if v > w.semantic_floor},
                    )
                ]
                for c, s in zip(cases, sims, strict=True)
            ]
        )
    return out


def line(name: str, r: Report) -> str:
    return (
        f"{name:<22} {r.recall_at_1:.3f}  {r.recall_at_3:.3f}  {r.recall_at_5:.3f}  "
        f"{r.mrr:.3f}  {r.none_rejection:.3f}  {r.false_rejection:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--semantic", action="store_true", help="also the embedding hybrid")
    ap.add_argument(
        "--centred", action="store_true", help="with --semantic, also with centred vectors"
    )
    ap.add_argument(
        "--identifiers", type=int, default=None, metavar="SEED", help="append an identifier"
    )
    args = ap.parse_args()
    bench = bench_root() / "tools"
    specs, ins = load_tool_file(bench / "tools.jsonl")
    cases = load_cases(bench / "queries_dev.jsonl")
    if args.identifiers is not None:
        cases = [c for c, _ in appended(cases, args.identifiers)]
    out: dict[str, object] = {"tools": len(specs), "queries": len(cases), "folds": args.folds}

    bm25 = bm25_scores(specs)
    scored = [bm25(c.query) for c in cases]
    plain = [[k for _, k in s] for s in scored]
    cutoffs = [0.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
    cut = [[[k for _, k in s] if s and s[0][0] >= x else [] for s in scored] for x in cutoffs]
    grid = lemon_grid()
    answers = [lemon_answers(cases, specs, ins, w) for w in grid]

    def report(ans: Sequence[Sequence[str]]) -> Report:
        it = iter(ans)
        return evaluate(cases, lambda q: next(it))

    rows = {
        "bm25": (report(plain), report(plain)),
        "bm25+cutoff": (
            report(cut[0]),
            cross_validate(cases, cut, args.folds, score=score_tools).report,
        ),
        "lemon": (
            report(answers[0]),
            cross_validate(cases, answers, args.folds, score=score_tools).report,
        ),
    }
    picks = cross_validate(cases, answers, args.folds, score=score_tools).picks
    if args.semantic:
        sem_grid = semantic_grid()
        for name, centred in (("lemon+sem", False), ("lemon+sem centred", True)):
            if centred and not args.centred:
                continue
            index = build_tool_index(specs, ins)
            sem = semantic_answers(cases, index, sem_grid, centred=centred)
            sem_cv = cross_validate(cases, sem, args.folds, score=score_tools)
            rows[name] = (report(sem[0]), sem_cv.report)
            for p in sorted(set(sem_cv.picks)):
                w = sem_grid[p]
                print(
                    f"{name}: {sem_cv.picks.count(p)} fold(s) picked weight {w.semantic_weight:g}"
                    f" floor {w.semantic_floor:g} bar {w.semantic_min_score:g}"
                )
    print(f"{len(specs)} tools, {len(cases)} queries; R@1 R@3 R@5 MRR none-rej false-rej")
    for name, (everything, cv) in rows.items():
        print(line(f"{name} (all)", everything))
        print(line(f"{name} (CV{args.folds})", cv))
        out[name] = {"all": everything.to_dict(), "cv": cv.to_dict()}
    shipped = [sum(p == 0 for p in picks), len(picks)]
    print(f"lemon folds picking the shipped weights: {shipped[0]}/{shipped[1]}")
    print("recall@1 per kind (lemon, all):")
    for k in rows["lemon"][0].per_kind:
        print(f"  {k.kind:<11} {k.recall_at_1 if k.recall_at_1 is not None else '-'}")
    if args.json:
        for name in rows:
            for part in ("all", "cv"):
                out[name][part].pop("misses", None)  # type: ignore[index]
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
