"""Each ranking signal's cross-validated effect, with its own constant tuned inside the folds.

    python benchmarks/retrieval_signals.py [--folds 10] [--semantic] [--cost]

For every signal below the labelled queries (every ``queries_dev*.jsonl`` of the bench) are
answered once per value of the signal's constant (the first value switches it off) times every
setting of the lexical grid of ``lemon skill eval --cv`` (``skills/ranking/tuning.py``), and
k-fold cross-validation picks, for each fold, the combination best on the other folds. "dev" is
the shipped setting on all queries; "CV" is the figure of record. Plain BM25 over name +
description + body is printed beside them as the baseline.

Signals:

* ``usage`` - the body's "When to use" sections as a field of their own (weight off / 0.3 /
  0.5 / 1.0; shipped 0.3), or as a long field like the body (bag of words, its mentions
  discounted in the IDF; weight off / 0.2 / 0.4);
* ``names stay as typed`` - no typo or compound reading for a word written with a capital
  after the request's first word, or holding a digit (off / on; not shipped): a person's or
  a place's name, or a year, read as a typo of some skill's word is a false match.

With ``--cost`` it also prints what the usage field costs: the CPU time of building the index
and its serialised size, with and without the field, interleaved in one process (median of 5
builds each).

With ``--semantic`` (the semantic extra and its model installed) the embedding blends are
measured the same way over the semantic grid (``tuning.SEMANTIC``): the shipped blend of the
description's vector, and the description's vector averaged with the best-matching sentence
of the description and the best-matching line of the "When to use" sections.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from corpus import bench_entries, dev_cases
from retrieval_eval import bm25_ranker

from lemon_skills import search
from lemon_skills.search import scoring
from lemon_skills.search.embed import centre, vectors
from lemon_skills.search.index import reweigh
from lemon_skills.search.metrics import Case, Report, evaluate, outcome, summarise
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find, tuning
from lemon_skills.skills.ranking import index as skill_index
from lemon_skills.skills.ranking.semantic import Similarity

Answers = list[list[str]]


def _fmt(r: Report) -> str:
    return (
        f"{r.recall_at_1:.3f} / {r.recall_at_3:.3f} / {r.none_rejection:.3f} / "
        f"{r.false_rejection:.3f}"
    )


def _without(weights: skill_index.Weights, field: str) -> skill_index.Weights:
    return dataclasses.replace(
        weights,
        field_weight={k: v for k, v in weights.field_weight.items() if k != field},
        field_b={k: v for k, v in weights.field_b.items() if k != field},
    )


def _with_weight(weights: skill_index.Weights, field: str, w: float) -> skill_index.Weights:
    if not w:
        return _without(weights, field)
    return dataclasses.replace(weights, field_weight={**weights.field_weight, field: w})


def _as_long(weights: skill_index.Weights) -> skill_index.Weights:
    return dataclasses.replace(weights, long_fields=weights.long_fields | {"usage"})


def lexical_answers(
    entries: Sequence[Entry],
    cases: Sequence[Case],
    base: skill_index.Weights,
    similar: Callable[[str], dict[int, float]] | None = None,
) -> list[Answers]:
    """Answers of every setting of the lexical (or, with ``similar``, semantic) grid."""
    grid = tuning.settings(tuning.SEMANTIC if similar is not None else tuning.LEXICAL)
    built: dict[float, skill_index.Index] = {}
    out = []
    sims = [similar(c.query) if similar else None for c in cases]
    for overrides in grid:
        weights = dataclasses.replace(base, **overrides)  # type: ignore[arg-type]
        if weights.body_df not in built:
            built[weights.body_df] = skill_index.build_index(entries, weights=weights)
        b = built[weights.body_df]
        index = skill_index.Index(b.entries, reweigh(b.core, weights))
        out.append(
            [
                [m.entry.key for m in find.rank(index, c.query, limit=10, similar=s)]
                for c, s in zip(cases, sims, strict=True)
            ]
        )
    return out


def signal_row(
    name: str, cases: Sequence[Case], per_value: Sequence[list[Answers]], shipped: int
) -> str:
    """One table row: the shipped value's dev figures and the joint CV of value x grid."""
    flat = [a for answers in per_value for a in answers]
    cv = search.cross_validate(cases, flat, 10)
    dev = summarise([outcome(c, a) for c, a in zip(cases, per_value[shipped][0], strict=True)])
    size = len(per_value[0])
    picked = sorted({p // size for p in cv.picks})
    return f"| {name} | {_fmt(dev)} | {_fmt(cv.report)} | {picked} |"


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019]*")


class NamesAsTyped:
    """While active, ``scoring`` tries no typo or compound reading of capitalised words
    (after the first) and of words with a digit."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.analyse = scoring.analyse
        self.likely = scoring._likely
        self.decompound = scoring.decompound

    def __enter__(self) -> NamesAsTyped:
        def analyse(index: Any, query: str, *, plain: bool = False) -> scoring.Query:
            words = _WORD.findall(query)
            self.names = {
                w.lower()
                for i, w in enumerate(words)
                if any(ch.isdigit() for ch in w) or (i and w[0].isupper() and not w.isupper())
            }
            return self.analyse(index, query, plain=plain)

        scoring.analyse = analyse  # type: ignore[assignment]
        scoring._likely = lambda index, w: [] if w in self.names else self.likely(index, w)
        scoring.decompound = lambda w, lex: None if w in self.names else self.decompound(w, lex)
        return self

    def __exit__(self, *exc: object) -> None:
        scoring.analyse = self.analyse  # type: ignore[assignment]
        scoring._likely = self.likely
        scoring.decompound = self.decompound


_LINE = re.compile(r"[*_`>#|]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _lines(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        t = " ".join(_LINE.sub(" ", line).split()).strip(" -\t0123456789.")
        if len(t.split()) >= 3:
            out.append(t[:300])
    return out


class ChunkSimilarity:
    """The shipped similarity averaged with the best sentence of the description and the
    best line of the "When to use" sections (each skill's own vector when it has none)."""

    def __init__(self, entries: Sequence[Entry], base: Similarity) -> None:
        self.base = base
        np: Any = base.enc.np
        self.np = np
        desc = [[s for s in _SENTENCE.split(e.description) if len(s.split()) >= 3] for e in entries]
        usage = [
            _lines(skill_index.usage_sections(e.body[: skill_index.BODY_CHARS])) for e in entries
        ]
        self.parts = []
        for chunks in (desc, usage):
            docs = np.asarray([d for d, c in enumerate(chunks) for _ in c], dtype=np.int64)
            texts = [t for c in chunks for t in c]
            # Centred on the catalogue's mean, as the shipped skill vectors are.
            self.parts.append((docs, centre(vectors(texts, base.enc), base.mean)))

    def __call__(self, query: str, *, floor: float, top: int = 50) -> dict[int, float]:
        np = self.np
        qv = centre(self.base.enc.encode([query])[0], self.base.mean)
        own = self.base.matrix @ qv
        total = own.copy()
        for docs, vecs in self.parts:
            best = own.copy()
            if len(docs):
                np.maximum.at(best, docs, vecs @ qv)
            total += best
        total /= 1 + len(self.parts)
        order = np.argsort(-total)[:top]
        return {int(i): float(total[i]) for i in order if total[i] > floor}


def cost(entries: Sequence[Entry], shipped: skill_index.Weights) -> None:
    """Build CPU and index size with and without the usage field, interleaved."""
    variants = {"with usage": shipped, "without": _without(shipped, "usage")}
    times: dict[str, list[float]] = {name: [] for name in variants}
    size = {}
    for _ in range(5):
        for name, weights in variants.items():
            start = time.process_time()
            index = skill_index.build_index(entries, weights=weights)
            times[name].append(time.process_time() - start)
            size[name] = len(skill_index.dumps(index))
    for name in variants:
        build = statistics.median(times[name]) * 1000
        print(f"{name}: build {build:.0f} ms CPU, index {size[name] / 1e6:.2f} MB")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--semantic", action="store_true")
    parser.add_argument("--cost", action="store_true", help="build time and size of the field")
    args = parser.parse_args()
    cases = dev_cases()
    shipped = skill_index.DEFAULT_WEIGHTS
    with bench_entries() as entries:
        if args.cost:
            cost(entries, shipped)
        print(f"{len(cases)} queries, CV = {args.folds} folds; R@1 / R@3 / none-rej / false-rej\n")
        print("| signal | dev (shipped value) | CV (value chosen in the folds) | values picked |")
        print("|---|---|---|---|")
        bm25 = evaluate(cases, bm25_ranker(entries, body=True))
        print(f"| plain BM25, name + description + body | {_fmt(bm25)} | (nothing tuned) | |")
        values = (0.0, 0.3, 0.5, 1.0)
        per = [lexical_answers(entries, cases, _with_weight(shipped, "usage", w)) for w in values]
        print(signal_row("lexical, usage field off", cases, per[:1], 0), flush=True)
        print(signal_row("lexical, usage field {off, .3, .5, 1}", cases, per, 1), flush=True)
        long = [
            lexical_answers(entries, cases, _as_long(_with_weight(shipped, "usage", w)))
            for w in (0.2, 0.4)
        ]
        print(signal_row("lexical, usage as a long field {off, .2, .4}", cases, [per[0], *long], 0))
        with NamesAsTyped():
            named = lexical_answers(entries, cases, shipped)
        print(signal_row("lexical, names stay as typed {off, on}", cases, [per[1], named], 0))
        if args.semantic:
            sim = Similarity(entries)
            floor = shipped.semantic_floor
            plain = lexical_answers(entries, cases, shipped, lambda q: sim(q, floor=floor))
            print(signal_row("+ semantic (description)", cases, [plain], 0), flush=True)
            chunks = ChunkSimilarity(entries, sim)
            mixed = lexical_answers(entries, cases, shipped, lambda q: chunks(q, floor=floor))
            print(signal_row("+ semantic (description, sentences, usage)", cases, [mixed], 0))
            print(signal_row("+ semantic, either blend", cases, [plain, mixed], 0), flush=True)


if __name__ == "__main__":
    main()
