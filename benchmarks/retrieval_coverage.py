"""Ranking signals against a rival that wins on one rare word, measured by cross-validation.

    python benchmarks/retrieval_coverage.py [--folds 10] [--margins] [--semantic] [--only NAME ...]

A request's wrong first answer often rests on one rare word of its name or description
while the right skill holds several of the request's words. Each variant below changes only
the order (``scoring._tally``); the abstain check (``scoring.evidence``) is as shipped. Each
variant's constant is chosen inside the folds jointly with the lexical grid of
``lemon skill eval --cv`` (``skills/ranking/tuning.py``; its first value switches the variant
off), as ``retrieval_signals.py`` does:

* ``saturate s`` - one term's share of a skill's score (in units of the rarest term) is
  squashed to ``s * tanh(share / s)``, so a single rare word cannot outweigh several;
* ``short words g`` - the score is multiplied by ((1 + w) / (1 + n)) ** g, where w is how many
  of the request's n known words the skill holds in its name, keywords, description, headings
  or usage sections: a skill naming several of the request's words beats one naming a single
  rare word.

The shipped ranker's constants that ``lemon skill eval --cv`` does not tune are measured the
same way: ``body_credit`` (what a body-only match counts towards coverage), ``phrase`` (the
bonus of two adjacent request words adjacent in a short field) and ``fuzzy`` (the weight of a
typo reading), each {shipped, two others}.

With ``--margins`` it first prints, for the requests whose first result the abstain bar
rejects, the range of that result's evidence and of its score over the runner-up's, for
requests no skill serves, those whose first result was right and those whose was wrong.

* ``lead w`` - the description's first sentence (what the skill is, before the list of
  triggers and of what it is not for) as a short field of its own at weight w {off, 1, 2}.

* ``disclaimers`` - the description's clauses that say what the skill is not for ("NOT for
  X (use other-skill)", "Do not use for ...") left out of its field (kept / dropped; with
  ``--semantic`` also measured with the semantic extra over its grid).

Plain BM25 over name + description + body is printed beside them as the baseline.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np
from corpus import bench_entries, dev_cases
from retrieval_eval import bm25_ranker
from retrieval_signals import Answers, _fmt, lexical_answers, signal_row

from lemon_skills.search import scoring
from lemon_skills.search.index import Index
from lemon_skills.search.metrics import Case, evaluate
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import index as skill_index
from lemon_skills.skills.ranking.semantic import Similarity

Tally = Callable[[Index, scoring.Query], scoring._Tally]
SHIPPED: Tally = scoring._tally


def saturate(s: float) -> Tally:
    def tally(index: Index, q: scoring.Query) -> scoring._Tally:
        n = len(index)
        score, covered, strong = np.zeros(n), np.zeros(n), np.zeros(n)
        unit = 1.0 / index.idf_of_unknown()
        for qt in q.terms:
            p = index.postings[qt.term]
            part = qt.weight * index.idf[qt.term] * p.weights
            part = s * np.tanh(part * unit / s) / unit
            credit = qt.weight * qt.credit
            score[p.docs] += part
            covered[p.docs] += np.where(p.strong, credit, credit * index.weights.body_credit)
            strong[p.docs[p.strong]] += part[p.strong]
        # The phrase bonus as shipped: the tally of the query's phrases alone.
        base = SHIPPED(index, dataclasses.replace(q, terms=()))
        score += base.score
        strong += base.strong
        return scoring._Tally(score, covered, strong)

    return tally


def short_words(g: float) -> Tally:
    def tally(index: Index, q: scoring.Query) -> scoring._Tally:
        t = SHIPPED(index, q)
        n = len(index)
        hit: dict[str, np.ndarray] = {}
        for qt in q.terms:
            p = index.postings[qt.term]
            for w in qt.words:
                h = hit.setdefault(w, np.zeros(n, dtype=np.bool_))
                h[p.docs[p.strong]] = True
        held = np.sum(list(hit.values()), axis=0) if hit else np.zeros(n)
        factor = ((1.0 + held) / (1.0 + max(q.words, 1))) ** g
        return scoring._Tally(t.score * factor, t.covered, t.strong * factor)

    return tally


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def with_lead(entries: Sequence[Entry], cases: Sequence[Case], weight: float) -> list[Answers]:
    """Answers with the description's first sentence as a field of its own at ``weight``."""
    shipped = skill_index.entry_fields

    def fields(entry: Entry) -> dict[str, str]:
        out = shipped(entry)
        out["lead"] = _SENTENCE.split(entry.description.strip(), maxsplit=1)[0]
        return out

    base = skill_index.DEFAULT_WEIGHTS
    weights = dataclasses.replace(
        base,
        field_weight={**base.field_weight, "lead": weight},
        field_b={**base.field_b, "lead": base.field_b["description"]},
    )
    skill_index.entry_fields = fields
    try:
        return lexical_answers(entries, cases, weights)
    finally:
        skill_index.entry_fields = shipped


#: A clause of a description that says what the skill is not for, up to the sentence's end.
_DISCLAIMER = re.compile(
    r"\b(not for|not meant for|do not use|don'?t use|not to be used)\b[^.;!?]*[.;!?]?", re.I
)


def without_disclaimers(
    entries: Sequence[Entry],
    cases: Sequence[Case],
    similar: Callable[[str], dict[int, float]] | None = None,
) -> list[Answers]:
    """Answers with the description's "NOT for ..." clauses left out of its field."""
    shipped = skill_index.entry_fields

    def fields(entry: Entry) -> dict[str, str]:
        out = shipped(entry)
        out["description"] = _DISCLAIMER.sub(" ", out["description"])
        return out

    skill_index.entry_fields = fields
    try:
        return lexical_answers(entries, cases, skill_index.DEFAULT_WEIGHTS, similar)
    finally:
        skill_index.entry_fields = shipped


def with_tally(entries: Sequence[Entry], cases: Sequence[Case], tally: Tally) -> list[Answers]:
    scoring._tally = tally
    try:
        return lexical_answers(entries, cases, skill_index.DEFAULT_WEIGHTS)
    finally:
        scoring._tally = SHIPPED


def margins(entries: Sequence[Entry], cases: Sequence[Case]) -> None:
    """For each request whose first result is rejected by the abstain bar: its evidence and
    the ratio of its score to the runner-up's, by whether an answer was due and right."""
    index = skill_index.build_index(entries, weights=skill_index.DEFAULT_WEIGHTS).core
    bar = index.weights.min_score
    rows = []
    for c in cases:
        p = scoring.pool(index, c.query, limit=3)
        if p is None:
            continue
        top = p.best[0]
        ev = scoring.evidence(index, p.plain, top)
        if ev >= bar:
            continue
        second = p.final[p.best[1]] if len(p.best) > 1 else 0.0
        ratio = p.final[top] / second if second else float("inf")
        kind = "none" if not c.expected else "right" if index.keys[top] in c.expected else "wrong"
        rows.append((kind, ev, ratio))
    for kind in ("none", "right", "wrong"):
        mine = [(e, r) for k, e, r in rows if k == kind]
        if mine:
            ratios = sorted(r for _, r in mine)
            evs = sorted(e for e, _ in mine)
            print(
                f"rejected first result, {kind}: {len(mine)}; evidence {evs[0]:.2f}-{evs[-1]:.2f}, "
                f"score / runner-up {ratios[0]:.2f}-{ratios[-1]:.2f}"
            )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--semantic", action="store_true", help="disclaimers with embeddings")
    parser.add_argument("--margins", action="store_true", help="the rejected first results")
    parser.add_argument("--only", nargs="*", help="measure only these signals (names as printed)")
    args = parser.parse_args()
    cases = dev_cases()
    with bench_entries() as entries:
        if args.margins:
            margins(entries, cases)
        print(f"{len(cases)} queries, CV = {args.folds} folds; R@1 / R@3 / none-rej / false-rej\n")
        print("| signal | dev (first value) | CV (value chosen in the folds) | values picked |")
        print("|---|---|---|---|")
        bm25 = evaluate(cases, bm25_ranker(entries, body=True))
        print(f"| plain BM25, name + description + body | {_fmt(bm25)} | (nothing tuned) | |")
        off = lexical_answers(entries, cases, skill_index.DEFAULT_WEIGHTS)
        print(signal_row("shipped", cases, [off], 0), flush=True)
        for name, values in (
            ("body_credit", (0.5, 0.25)),
            ("phrase", (0.0, 0.25, 1.0)),
            ("fuzzy", (0.5, 0.35)),
        ):
            if args.only and name not in args.only:
                continue
            shipped = getattr(skill_index.DEFAULT_WEIGHTS, name)
            per = [off] + [
                lexical_answers(
                    entries, cases, dataclasses.replace(skill_index.DEFAULT_WEIGHTS, **{name: v})
                )
                for v in values
            ]
            for i, v in enumerate(values, 1):
                print(signal_row(f"{name} {v} only", cases, [per[i]], 0), flush=True)
            print(signal_row(f"{name} {{{shipped}, {values}}}", cases, per, 0), flush=True)
        if not args.only or "lead" in args.only:
            lead_values = (1.0, 2.0)
            per = [off] + [with_lead(entries, cases, v) for v in lead_values]
            for i, v in enumerate(lead_values, 1):
                print(signal_row(f"lead {v} only", cases, [per[i]], 0), flush=True)
            print(signal_row(f"lead {{off, {lead_values}}}", cases, per, 0), flush=True)
        if not args.only or "disclaimers" in args.only:
            per = [off, without_disclaimers(entries, cases)]
            print(signal_row("disclaimers dropped only", cases, [per[1]], 0), flush=True)
            print(signal_row("disclaimers {kept, dropped}", cases, per, 0), flush=True)
            print(signal_row("disclaimers {dropped, kept}", cases, per[::-1], 0), flush=True)
            if args.semantic:
                sim = Similarity(entries)
                floor = skill_index.DEFAULT_WEIGHTS.semantic_floor

                def similar(q: str) -> dict[int, float]:
                    return sim(q, floor=floor)

                base = skill_index.DEFAULT_WEIGHTS
                kept = lexical_answers(entries, cases, base, similar)
                dropped = without_disclaimers(entries, cases, similar)
                print(signal_row("+ semantic, disclaimers kept", cases, [kept], 0))
                print(signal_row("+ semantic, disclaimers dropped", cases, [dropped], 0))
        for name, make, values in (
            ("short words", short_words, (0.5, 1.0, 2.0)),
            ("saturate", saturate, (1.0, 1.5, 2.5)),
        ):
            if args.only and name not in args.only:
                continue
            per = [off] + [with_tally(entries, cases, make(v)) for v in values]
            for i, v in enumerate(values, 1):
                print(signal_row(f"{name} {v} only", cases, [per[i]], 0), flush=True)
            print(signal_row(f"{name} {{off, {values}}}", cases, per, 0), flush=True)


if __name__ == "__main__":
    main()
