"""Identifiers in a request (numbers, versions, hashes, ticket ids, ports, paths, URLs) neither
count against a match nor dilute it, unless a document states them: over hand-made skills, and
over the bench's skills and tools with a seeded identifier appended to every labelled request.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from benchmarks.corpus import bench_entries, dev_cases
from benchmarks.identifiers import appended

import lemon_skills
from lemon_skills.mcp.catalog.toolsearch import (
    build_tool_index,
    load_tool_file,
    rank_tools,
    tool_key,
)
from lemon_skills.search import scoring, tokens
from lemon_skills.search.metrics import Case, load_cases
from lemon_skills.skills.ranking import find as ranking
from tests.helpers.bench import find_bench
from tests.helpers.skills import write_skill

BENCH = find_bench()
needs_bench = pytest.mark.skipif(BENCH is None, reason="no bench (set LEMON_BENCH_DIR)")


def _keys(query: str, cwd: Path) -> list[str]:
    return [e.key for e in lemon_skills.find_relevant(query, cwd=cwd)]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("postgres migration for issue 1234", [("1234",)]),
        ("fix PROJ-12 on localhost:8080 (#456)", [("proj",), ("localhost", "8080"), ("456",)]),
        ("bump to v2.3.1, commit a3f9c21", [("v2",), ("a3f9c21",)]),
        (
            "see src/app/main.py and https://x.test/pull/7",
            [("src", "app", "main", "py")] + [("https", "test", "pull")],
        ),
        ("k8s s3 3d erc20 CI/CD python3.12 rank/alpha", []),
        ("port it to modern Fortran 2008", []),  # a year describes
        ("port 1234 and 1234 port", [("1234",), ("1234",)]),
    ],
)
def test_names_are_told_from_words(text, names):
    assert tokens.opaque_tokens(text) == names


def test_a_ticket_number_does_not_take_the_answer(project, project_skills):
    write_skill(
        project_skills,
        "reversible-migrations",
        description="Write reversible PostgreSQL migrations.",
    )
    for suffix in ("", "12-0", "102-0", "1234", "#1234", "PROJ-1234 a3f9c21", "db/0042_up.sql"):
        query = f"postgres migration for issue {suffix}"
        assert _keys(query, project) == ["reversible-migrations"], query


def test_a_number_a_skill_states_still_counts(project, project_skills):
    write_skill(project_skills, "http-client", description="HTTP client requests.")
    write_skill(
        project_skills,
        "not-found-pages",
        description="Design friendly HTTP 404 pages that guide lost visitors back to the site.",
    )
    assert _keys("http 404", project)[0] == "not-found-pages"
    assert _keys("http 4040", project)[0] == "http-client"


def test_the_embedding_model_reads_the_request_without_names_no_skill_states(tmp_path):
    from lemon_skills.skills.selection import evaluation

    root = tmp_path / "skills"
    write_skill(
        root, "reversible-migrations", description="Write reversible PostgreSQL migrations."
    )
    write_skill(root, "not-found-pages", description="Design friendly HTTP 404 pages.")
    core = ranking.build_index(evaluation._entries_in(root)).core
    said = scoring.said(core, "postgres migration for PROJ-1234 at a3f9c21 in db/0042_up.sql")
    assert said == "postgres migration for at in"
    assert scoring.said(core, "an http 404 page for issue 1234") == "an http 404 page for issue"


def _stated(index: object, ident: str) -> bool:
    """Whether some document states a word of ``ident`` (then it may count, by design)."""
    named = {w for name in tokens.opaque_tokens(ident) for w in name}
    return scoring.unstated(index, ident) != named  # type: ignore[arg-type]


def _unchanged(index: object, cases: list[Case], answer: Callable[[str], list[str]]) -> int:
    """Assert that no appended identifier no document states changes ``answer``; how many
    requests that held for."""
    checked = 0
    for case, ident in appended(cases, seed=30):
        if _stated(index, ident):
            continue
        original = case.query[: -len(ident) - 1]
        assert answer(case.query) == answer(original), case.query
        checked += 1
    return checked


@pytest.mark.slow
@needs_bench
def test_appended_identifiers_change_no_skill_answer():
    cases = dev_cases()
    with bench_entries() as entries:
        index = ranking.build_index(entries)

        def answer(query: str) -> list[str]:
            return [m.entry.key for m in ranking.rank(index, query, limit=3)]

        assert _unchanged(index.core, cases, answer) >= 0.95 * len(cases)


@needs_bench
def test_appended_identifiers_change_no_tool_answer():
    assert BENCH is not None
    specs, instructions = load_tool_file(BENCH / "tools" / "tools.jsonl")
    index = build_tool_index(specs, instructions)
    cases = load_cases(BENCH / "tools" / "queries_dev.jsonl")

    def answer(query: str) -> list[str]:
        return [tool_key(m.spec) for m in rank_tools(index, query, limit=5)]

    assert _unchanged(index.core, cases, answer) >= 0.95 * len(cases)
