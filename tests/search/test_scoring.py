"""Ranking an index: ties, abstaining, typo readings."""

from __future__ import annotations

from lemon_skills import search
from lemon_skills.search import index as search_index

WEIGHTS = search.Weights(
    field_weight={"name": 3.0, "description": 2.0, "body": 0.1},
    field_b={"name": 0.3, "description": 0.5, "body": 0.75},
)


def _doc(key: str, description: str, priority: int = 0) -> search.Document:
    return search.Document(
        key, {"name": key, "description": description}, names=(key,), priority=priority
    )


def test_ties_beyond_the_limit_still_go_to_the_higher_priority():
    # Twelve documents score the same; the one a project adds is last but must come first.
    docs = [_doc(f"lint{i}", "Lint Python code with ruff.") for i in range(11)]
    docs.append(_doc("lint11", "Lint Python code with ruff.", priority=1))
    index = search.build_index(docs, WEIGHTS)
    assert [m.key for m in search.rank(index, "lint python code", limit=1)] == ["lint11"]
    assert [m.key for m in search.rank(index, "lint python code", limit=3)] == [
        "lint11",
        "lint0",
        "lint1",
    ]


def test_a_request_nothing_is_about_gets_nothing():
    index = search.build_index([_doc("pdf", "Merge PDF files.")], WEIGHTS)
    assert search.rank(index, "weather in paris") == []
    assert search.rank(index, "the and of") == []


def test_typo_readings_rank_alike_whatever_the_order_documents_came_in():
    docs = [
        _doc("kubernetes", "Deploy to kubernetes clusters."),
        _doc("kubernetic", "Kubernetic dashboards for clusters."),
        _doc("notes", "Write release notes."),
    ]
    forward = search.build_index(docs, WEIGHTS)
    backward = search_index.update_index(search.build_index(docs[::-1], WEIGHTS), docs)
    assert search.rank(forward, "kubernets clusters", limit=3) == search.rank(
        backward, "kubernets clusters", limit=3
    )


def test_a_word_the_catalogue_knows_in_another_form_is_not_read_as_a_typo():
    docs = [
        _doc("logs", "A JSON log parser for CI output."),
        _doc("flaky", "Fix tests that passed locally but fail in CI."),
    ]
    index = search.build_index(docs, WEIGHTS)
    found = search.rank(index, "json output parsed wrong", limit=3)
    assert [m.key for m in found] == ["logs"]
    assert "term:parser<-parsed" in found[0].parts
    pool = search.scoring.pool(index, "json output parsed wrong", limit=3)
    assert pool is not None
    readings = {qt.term for qt in pool.query.terms}
    assert "pass" not in readings  # "parsed" is no misspelling of "passed"


def test_a_real_typo_is_still_read():
    docs = [_doc("flaky", "Fix tests that passed locally but fail in CI.")]
    index = search.build_index(docs, WEIGHTS)
    assert [m.key for m in search.rank(index, "tests that pased locally", limit=3)] == ["flaky"]
