"""Measure a ranker on labelled queries: recall@k, MRR, none-rejection, false-rejection, CV.

A labelled query (``Case``) names the documents that would be right for it (``expected``; any
of them counts as a hit) or none at all (``expected == ()``: the ranker should answer ``[]``).
The metrics are pure functions of the cases and the ranked keys each query got back.

``cross_validate`` measures a *tuning procedure*, not one setting: the cases are cut into k
folds with the same mix of kinds, and each fold is answered by the candidate setting that
scores best on the other folds, so the figure is earned on queries the choice never saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemon_skills.errors import ConfigError

Ranker = Callable[[str], Sequence[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One labelled query."""

    query: str
    expected: tuple[str, ...]
    kind: str = "unlabelled"


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What the ranker returned for one case and where the first right skill was."""

    case: Case
    got: tuple[str, ...]
    rank: int | None  # 1-based rank of the first expected key, None when absent

    @property
    def is_none_case(self) -> bool:
        """True when no skill is right for the query."""
        return not self.case.expected

    @property
    def ok(self) -> bool:
        """Top result right, or nothing returned when nothing applies."""
        return not self.got if self.is_none_case else self.rank == 1


@dataclass(frozen=True, slots=True, kw_only=True)
class KindStats:
    """Metrics for the cases of one kind."""

    kind: str
    count: int
    recall_at_1: float | None
    recall_at_3: float | None
    none_rejection: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """Metrics over a set of labelled queries plus every case that was not answered right."""

    count: int
    targeted: int
    none: int
    recall_at_1: float
    recall_at_3: float
    recall_at_5: float
    mrr: float
    none_rejection: float
    false_rejection: float
    per_kind: tuple[KindStats, ...]
    misses: tuple[Outcome, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "count": self.count,
            "targeted": self.targeted,
            "none": self.none,
            "recall_at_1": self.recall_at_1,
            "recall_at_3": self.recall_at_3,
            "recall_at_5": self.recall_at_5,
            "mrr": self.mrr,
            "none_rejection": self.none_rejection,
            "false_rejection": self.false_rejection,
            "per_kind": [
                {
                    "kind": k.kind,
                    "count": k.count,
                    "recall_at_1": k.recall_at_1,
                    "recall_at_3": k.recall_at_3,
                    "none_rejection": k.none_rejection,
                }
                for k in self.per_kind
            ],
            "misses": [
                {
                    "query": o.case.query,
                    "kind": o.case.kind,
                    "expected": list(o.case.expected),
                    "got": list(o.got),
                    "rank": o.rank,
                }
                for o in self.misses
            ],
        }


def parse_cases(lines: Iterable[str], *, source: str = "<queries>") -> list[Case]:
    """Read JSONL lines ``{"query", "expected": [keys], "kind"}``; blank lines are skipped.

    Raises:
        ConfigError: a line is not JSON or lacks a string ``query`` / list ``expected``.
    """
    cases: list[Case] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}:{n}: not JSON ({exc.msg})") from exc
        query = data.get("query") if isinstance(data, dict) else None
        expected = data.get("expected", []) if isinstance(data, dict) else None
        if not isinstance(query, str) or not isinstance(expected, list):
            raise ConfigError(
                f'{source}:{n}: each line needs "query" (string) and "expected" (list of keys)'
            )
        kind = data.get("kind") or ("none" if not expected else "unlabelled")
        cases.append(Case(query=query, expected=tuple(map(str, expected)), kind=str(kind)))
    return cases


def load_cases(path: Path) -> list[Case]:
    """``parse_cases`` over a file.

    Raises:
        ConfigError: the file cannot be read or a line is malformed.
    """
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from exc
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (byte {exc.start}); expected JSON lines"
        raise ConfigError(reason, path=path) from exc
    return parse_cases(content.splitlines(), source=str(path))


def outcome(case: Case, got: Sequence[str]) -> Outcome:
    """Score one answer."""
    want = set(case.expected)
    rank = next((i for i, key in enumerate(got, 1) if key in want), None)
    return Outcome(case=case, got=tuple(got), rank=rank)


def _share(hits: int, total: int) -> float:
    return hits / total if total else 0.0


def summarise(outcomes: Sequence[Outcome]) -> Report:
    """Aggregate outcomes into a report (misses keep input order)."""
    targeted = [o for o in outcomes if not o.is_none_case]
    nones = [o for o in outcomes if o.is_none_case]
    kinds = sorted({o.case.kind for o in outcomes})
    per_kind = []
    for kind in kinds:
        group = [o for o in outcomes if o.case.kind == kind]
        tg = [o for o in group if not o.is_none_case]
        ng = [o for o in group if o.is_none_case]
        per_kind.append(
            KindStats(
                kind=kind,
                count=len(group),
                recall_at_1=_share(sum(o.rank == 1 for o in tg), len(tg)) if tg else None,
                recall_at_3=_share(sum(_within(o, 3) for o in tg), len(tg)) if tg else None,
                none_rejection=_share(sum(not o.got for o in ng), len(ng)) if ng else None,
            )
        )
    return Report(
        count=len(outcomes),
        targeted=len(targeted),
        none=len(nones),
        recall_at_1=_share(sum(o.rank == 1 for o in targeted), len(targeted)),
        recall_at_3=_share(sum(_within(o, 3) for o in targeted), len(targeted)),
        recall_at_5=_share(sum(_within(o, 5) for o in targeted), len(targeted)),
        mrr=_share_f(sum(1 / o.rank for o in targeted if o.rank), len(targeted)),
        none_rejection=_share(sum(not o.got for o in nones), len(nones)),
        false_rejection=_share(sum(not o.got for o in targeted), len(targeted)),
        per_kind=tuple(per_kind),
        misses=tuple(o for o in outcomes if not o.ok),
    )


def _within(o: Outcome, k: int) -> bool:
    return o.rank is not None and o.rank <= k


def _share_f(total: float, count: int) -> float:
    return total / count if count else 0.0


def evaluate(cases: Sequence[Case], ranker: Ranker) -> Report:
    """Run ``ranker`` on every case and summarise."""
    return summarise([outcome(c, ranker(c.query)) for c in cases])


# --- cross-validation ------------------------------------------------------------------------

#: One candidate's answers: the ranked keys it returned for each case, in case order.
Answers = Sequence[Sequence[str]]


def objective(r: Report) -> float:
    """What tuning maximises: recall@1 + recall@3 + none-rejection / 2 - 2 x false-rejection
    (answering nothing when something fits costs more than a wrong order)."""
    return r.recall_at_1 + r.recall_at_3 + 0.5 * r.none_rejection - 2 * r.false_rejection


def stratified_folds(cases: Sequence[Case], k: int) -> list[list[int]]:
    """``k`` folds of case positions with the same mix of kinds, fixed by a hash of each
    query (so a fold does not change when cases are added elsewhere in the file)."""
    folds: list[list[int]] = [[] for _ in range(k)]
    for kind in sorted({c.kind for c in cases}):
        group = sorted(
            (i for i, c in enumerate(cases) if c.kind == kind),
            key=lambda i: hashlib.sha1(cases[i].query.encode()).hexdigest(),
        )
        for n, i in enumerate(group):
            folds[n % k].append(i)
    return folds


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossValidation:
    """Held-out metrics of a tuning procedure and the candidate each fold picked."""

    report: Report
    picks: tuple[int, ...]


def cross_validate(
    cases: Sequence[Case],
    answers: Sequence[Answers],
    k: int = 10,
    *,
    score: Callable[[Report], float] = objective,
) -> CrossValidation:
    """Answer each of ``k`` folds with the candidate best on the other folds.

    ``answers[c][i]`` is what candidate ``c`` returned for ``cases[i]``. Ties between
    candidates go to the earlier one, so list the current default first.

    Raises:
        ValueError: no candidate, or fewer cases than folds.
    """
    if not answers or k < 2 or len(cases) < k:
        raise ValueError("cross-validation needs a candidate and at least k >= 2 cases")
    got = [[outcome(c, a[i]) for i, c in enumerate(cases)] for a in answers]
    held: list[Outcome] = []
    picks: list[int] = []
    for fold in stratified_folds(cases, k):
        inside = set(fold)
        train = [i for i in range(len(cases)) if i not in inside]
        pick = max(
            range(len(answers)),
            key=lambda c: (score(summarise([got[c][i] for i in train])), -c),
        )
        picks.append(pick)
        held.extend(got[pick][i] for i in fold)
    return CrossValidation(report=summarise(held), picks=tuple(picks))
