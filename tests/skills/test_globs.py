"""``paths:`` globs: the usual patterns keep their meaning, hostile ones cannot hang a prompt."""

from __future__ import annotations

import pytest

from lemon_skills.skills.selection.globs import MAX_ALTERNATIVES, matches_path

# (pattern, path, expected): the meanings the regex-based matcher gave these patterns.
USUAL = [
    ("*.ts", "src/a.ts", True),
    ("*.ts", "src/a.tsx", False),
    ("src/**/*.{ts,tsx}", "src/x/y/c.tsx", True),
    ("src/**/*.{ts,tsx}", "src/c.ts", True),
    ("src/**/*.{ts,tsx}", "lib/c.ts", False),
    ("src/api", "src/api/v1/x.py", True),
    ("src/api", "src/apix/x.py", False),
    ("/docs/*.md", "docs/a.md", True),
    ("docs/*.md", "x/docs/a.md", False),
    ("**/test_*.py", "d/e/test_x.py", True),
    ("**/test_*.py", "test_x.py", True),
    ("*.[jt]s", "a.js", True),
    ("[!a]*.md", "a.md", False),
    ("[!a]*.md", "b.md", True),
    ("??.py", "ab.py", True),
    ("??.py", "abc.py", False),
    ("a*b*c.txt", "a_b_c.txt", True),
    ("**/node_modules/**", "p/node_modules/q", True),
    ("**/node_modules/**", "node_modules", False),
    ("x/**/y/**/z.md", "x/1/y/2/z.md", True),
    ("x/**/y/**/z.md", "x/y/z.md", True),
    ("x/**/y/**/z.md", "x/1/2/z.md", False),
    ("{a,b}/{c,d}/e", "b/d/e", True),
    ("{a,b}/{c,d}/e", "a/e", False),
    ("tests/", "tests/x.py", True),
    ("*.{md,mdx}", "q/r.mdx", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), USUAL)
def test_usual_globs_keep_their_meaning(pattern, path, expected):
    assert matches_path(pattern, path) is expected


@pytest.mark.timeout(10)
def test_twelve_globstars_against_a_long_path_answer_at_once():
    # As a regex this pattern backtracks for minutes against a deep path that almost matches.
    hostile = "**/" * 12 + "x.py"
    deep = "a/" * 200 + "x.pyc"
    assert matches_path(hostile, deep) is False
    assert matches_path(hostile, "a/" * 200 + "x.py") is True


@pytest.mark.timeout(10)
def test_many_stars_in_one_name_answer_at_once():
    assert matches_path("*a" * 40 + "*b", "a" * 4000) is False
    assert matches_path("*a" * 40 + "*b", "a" * 4000 + "b") is True


@pytest.mark.timeout(10)
def test_braces_that_would_expand_past_the_cap_match_nothing():
    assert MAX_ALTERNATIVES < 2**20
    assert matches_path("{a,b}" * 20, "ab" * 10) is False
    assert matches_path("{a,b}" * 3, "aba") is True


@pytest.mark.timeout(10)
def test_a_skill_with_thousands_of_patterns_is_bounded_to_the_first_few():
    from pathlib import Path

    from lemon_skills.skills.selection.activation import matches
    from lemon_skills.skills.selection.globs import MAX_PATTERNS

    root = Path("/p")
    decoys = ["**/" * 12 + f"never-{i}.py" for i in range(10_000)]
    deep = root.joinpath(*["a"] * 100, "x.py")
    assert matches([*decoys[: MAX_PATTERNS - 1], "*.py"], [deep], [root])
    assert not matches([*decoys, "*.py"], [deep], [root])  # past the bound: never tried
