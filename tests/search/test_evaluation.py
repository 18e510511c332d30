"""Retrieval metrics on tiny labelled sets."""

from __future__ import annotations

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.search.metrics import Case, evaluate, parse_cases


def test_metrics_on_a_tiny_labelled_set():
    cases = [
        Case(query="q1", expected=("a",), kind="terse"),
        Case(query="q2", expected=("b", "c"), kind="terse"),
        Case(query="q3", expected=("d",), kind="body"),
        Case(query="q4", expected=(), kind="none"),
        Case(query="q5", expected=(), kind="none"),
    ]
    answers = {"q1": ["a", "x"], "q2": ["x", "c"], "q3": [], "q4": [], "q5": ["a"]}
    r = evaluate(cases, lambda q: answers[q])
    assert (r.count, r.targeted, r.none) == (5, 3, 2)
    assert r.recall_at_1 == pytest.approx(1 / 3)
    assert r.recall_at_3 == pytest.approx(2 / 3)
    assert r.mrr == pytest.approx((1 + 1 / 2) / 3)
    assert r.none_rejection == pytest.approx(1 / 2)
    assert r.false_rejection == pytest.approx(1 / 3)
    kinds = {k.kind: k for k in r.per_kind}
    assert kinds["terse"].recall_at_1 == pytest.approx(1 / 2)
    assert kinds["terse"].recall_at_3 == 1.0
    assert kinds["body"].recall_at_1 == 0.0
    assert kinds["none"].none_rejection == pytest.approx(1 / 2)
    assert kinds["none"].recall_at_1 is None
    assert [o.case.query for o in r.misses] == ["q2", "q3", "q5"]


def test_rank_beyond_three_counts_for_mrr_only():
    r = evaluate([Case(query="q", expected=("z",))], lambda q: ["a", "b", "c", "z"])
    assert (r.recall_at_1, r.recall_at_3, r.mrr) == (0.0, 0.0, 0.25)


def test_parse_cases_reads_jsonl_and_skips_blank_lines():
    cases = parse_cases(
        ['{"query": "fix ci", "expected": ["gh-fix-ci"], "kind": "terse"}', "", '{"query": "x"}']
    )
    assert cases[0] == Case(query="fix ci", expected=("gh-fix-ci",), kind="terse")
    assert cases[1] == Case(query="x", expected=(), kind="none")


@pytest.mark.parametrize(
    "line", ["not json", '{"expected": []}', '{"query": "q", "expected": "k"}']
)
def test_parse_cases_names_the_bad_line(line):
    with pytest.raises(ConfigError, match=r"q.jsonl:2"):
        parse_cases(['{"query": "ok", "expected": []}', line], source="q.jsonl")
