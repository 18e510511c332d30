from __future__ import annotations

import math

import pytest

from lemon_skills import search
from lemon_skills.skills.format.manifest import Manifest
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import tuning
from lemon_skills.skills.ranking.index import DEFAULT_WEIGHTS


@pytest.mark.parametrize("grid", [tuning.LEXICAL, tuning.SEMANTIC])
def test_the_first_setting_of_each_grid_is_what_ships(grid):
    first = tuning.settings(grid)[0]
    assert first == {name: getattr(DEFAULT_WEIGHTS, name) for name in grid}


def test_settings_are_every_combination():
    grid = tuning.settings({"a": (1.0, 2.0), "b": (3.0, 4.0, 5.0)})
    assert len(grid) == 6
    assert grid[0] == {"a": 1.0, "b": 3.0}
    assert {tuple(s.values()) for s in grid} == {
        (a, b) for a in (1.0, 2.0) for b in (3.0, 4.0, 5.0)
    }


def _entry(key, description):
    return Entry(
        key=key,
        name=key,
        description=description,
        source="global",
        path=f"/s/{key}",
        manifest=Manifest(),
        body="",
    )


def test_cross_validation_reports_every_fold_and_what_it_picked():
    entries = [
        _entry("pdf-merge", "Merge PDF files into one document."),
        _entry("k8s-deploy", "Deploy services to Kubernetes clusters."),
        _entry("sql-tune", "Tune slow PostgreSQL queries with indexes."),
    ]
    cases = [
        search.Case(query="merge pdf", expected=("pdf-merge",)),
        search.Case(query="deploy kubernetes", expected=("k8s-deploy",)),
        search.Case(query="slow postgres query", expected=("sql-tune",)),
        search.Case(query="combine pdf documents", expected=("pdf-merge",)),
    ]
    result = tuning.cross_validate(entries, cases, folds=2)
    assert result.folds == 2
    assert len(result.settings) == math.prod(len(v) for v in tuning.LEXICAL.values())
    assert sum(n for _, n in result.picked()) == 2


def test_fewer_cases_than_folds_is_refused():
    with pytest.raises(ValueError):
        tuning.cross_validate(
            [_entry("a", "b")], [search.Case(query="a", expected=("a",))], folds=3
        )
