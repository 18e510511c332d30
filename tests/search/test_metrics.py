"""Cross-validation measures the tuning procedure, not the setting best on all queries."""

from __future__ import annotations

import pytest

from lemon_skills.search.metrics import Case, cross_validate, evaluate, stratified_folds


def _cases(n: int) -> list[Case]:
    return [Case(query=f"q{i}", expected=(f"k{i}",), kind="a" if i % 2 else "b") for i in range(n)]


def test_folds_partition_the_cases_with_the_same_mix_of_kinds():
    cases = _cases(20)
    folds = stratified_folds(cases, 5)
    assert sorted(i for f in folds for i in f) == list(range(20))
    for fold in folds:
        assert sorted(cases[i].kind for i in fold) == ["a", "a", "b", "b"]


def test_each_fold_is_answered_by_the_candidate_best_on_the_others():
    cases = _cases(20)
    right = [[c.expected[0]] for c in cases]
    wrong = [["x"] for _ in cases]
    # Candidate 1 is right only on fold 0's queries: best there, never picked for it.
    fold0 = set(stratified_folds(cases, 5)[0])
    lucky = [right[i] if i in fold0 else wrong[i] for i in range(20)]
    cv = cross_validate(cases, [wrong, lucky], 5)
    assert cv.picks[0] == 0
    assert all(p == 1 for p in cv.picks[1:])
    assert cv.report.recall_at_1 == pytest.approx(0.0)
    assert evaluate(cases, lambda q: lucky[int(q[1:])]).recall_at_1 == pytest.approx(0.2)


def test_recall_at_five_counts_ranks_four_and_five():
    r = evaluate([Case(query="q", expected=("z",))], lambda q: ["a", "b", "c", "d", "z"])
    assert (r.recall_at_3, r.recall_at_5) == (0.0, 1.0)
