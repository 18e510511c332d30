"""The skill ranker's tunable constants and their cross-validated figures.

``lemon skill eval --cv K`` answers every labelled query once per setting of the grid below
(the shipped value of each constant first), then reports k-fold cross-validation: each fold is
answered by the setting best on the other folds. That is the honest effect of the constants on
queries their choice never saw; the plain eval is the score of the shipped setting on queries
it may have been chosen on. The grids are small on purpose: every extra value is another chance
to fit the folds by luck.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lemon_skills import search
from lemon_skills.search.index import reweigh
from lemon_skills.search.schema import BUILD_FIELDS
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find
from lemon_skills.skills.ranking.index import DEFAULT_WEIGHTS, Index, build_index
from lemon_skills.skills.ranking.semantic import Similarity

Grid = Mapping[str, Sequence[float]]

#: Lexical constants tuned by CV: the IDF discount of body-only mentions, how hard partial
#: coverage of the query is punished, and the abstain bar.
LEXICAL: Grid = {
    "body_df": (0.35, 0.25, 0.5, 1.0),
    "coverage_power": (0.75, 0.5, 1.0),
    "min_score": (0.45, 0.35, 0.55),
}
#: With embeddings: the weight of similarity and the bar of the blended score.
SEMANTIC: Grid = {"semantic_weight": (3.0, 2.0, 4.0), "semantic_min_score": (0.7, 0.8, 0.9)}


def settings(grid: Grid) -> list[dict[str, float]]:
    """Every combination of ``grid``'s values; the first is all shipped values."""
    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tuning:
    """Cross-validated figures of a grid, with the setting each fold picked."""

    folds: int
    settings: tuple[dict[str, float], ...]
    cv: search.CrossValidation

    def picked(self) -> list[tuple[dict[str, float], int]]:
        """Each setting some fold picked, with how many folds picked it (most first)."""
        counts: dict[int, int] = {}
        for p in self.cv.picks:
            counts[p] = counts.get(p, 0) + 1
        return [(self.settings[p], n) for p, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def cross_validate(
    entries: Sequence[Entry],
    cases: Sequence[search.Case],
    *,
    folds: int = 10,
    similarity: Similarity | None = None,
    max_results: int = 10,
) -> Tuning:
    """Cross-validate the lexical grid (or, with ``similarity``, the semantic one).

    Raises:
        ValueError: fewer cases than folds.
    """
    grid = settings(SEMANTIC if similarity is not None else LEXICAL)
    floor = DEFAULT_WEIGHTS.semantic_floor
    sims: list[dict[int, float] | None] = [None] * len(cases)
    if similarity is not None:
        sims = [similarity(c.query, floor=floor) for c in cases]
    built: dict[tuple[tuple[str, float], ...], Index] = {}
    answers = []
    for overrides in grid:
        weights = dataclasses.replace(DEFAULT_WEIGHTS, **overrides)  # type: ignore[arg-type]
        key = tuple(sorted((k, v) for k, v in overrides.items() if k in BUILD_FIELDS))
        if key not in built:
            built[key] = build_index(entries, weights=weights)
        index = Index(built[key].entries, reweigh(built[key].core, weights))
        answers.append(
            [
                [m.entry.key for m in find.rank(index, c.query, limit=max_results, similar=s)]
                for c, s in zip(cases, sims, strict=True)
            ]
        )
    cv = search.cross_validate(cases, answers, folds)
    return Tuning(folds=folds, settings=tuple(grid), cv=cv)
