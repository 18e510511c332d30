"""Measure a ranker on labelled queries: recall@k, MRR, none-rejection and false-rejection.

A labelled query (``Case``) names the skills that would be right for it (``expected``; any of
them counts as a hit) or none at all (``expected == ()``: the ranker should answer ``[]``).
The metrics are pure functions of the cases and the ranked keys each query got back.
"""

from __future__ import annotations

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
