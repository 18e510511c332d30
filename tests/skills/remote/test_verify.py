"""The checks a listed skill and a fetched file pass before use (pure)."""

from __future__ import annotations

import pytest

from lemon_skills.skills.remote.model import RemoteFile, RemoteSkill
from lemon_skills.skills.remote.verify import (
    content_problem,
    digest_of,
    frontmatter_problem,
    listing_problem,
    size_problem,
    skill_problem,
)
from tests.skills.remote.test_load import BODY, FM, skill


def test_yaml_dates_compare_equal_to_their_json_form():
    assert frontmatter_problem(FM, BODY.decode()) is None


def test_bad_frontmatter_is_a_diagnostic():
    assert "does not parse" in (frontmatter_problem(FM, "---\nname: [\n---\n") or "")
    assert frontmatter_problem(FM, "no frontmatter") == "SKILL.md has no YAML frontmatter"


@pytest.mark.parametrize("name", ["../evil", "a/b", "Evil", "x" * 65, ""])
def test_names_with_path_characters_or_outside_the_rules_are_refused(name):
    assert "naming rules" in (skill_problem(skill(name=name)) or "")


def test_a_file_outside_the_skill_is_refused():
    s = skill()
    outside = RemoteSkill(
        s.server,
        s.uri,
        s.name,
        s.description,
        s.frontmatter,
        (*(s.files or ()), RemoteFile("skill://other/SKILL.md", digest_of(b""), 0)),
    )
    assert "outside the skill" in (skill_problem(outside) or "")


def test_content_must_match_the_listed_size_and_digest():
    f = RemoteFile("skill://pdf/SKILL.md", digest_of(BODY), len(BODY))
    assert content_problem(f, BODY) is None
    assert "size mismatch" in (content_problem(f, BODY + b"x") or "")
    same_size = BODY.replace(b"Body.", b"Evil!")
    assert "digest mismatch" in (content_problem(f, same_size) or "")


def test_a_listed_size_over_the_bound_is_refused_before_fetching():
    assert size_problem(RemoteFile("skill://pdf/SKILL.md", None, 50 * 1024 * 1024))
    assert size_problem(RemoteFile("skill://pdf/SKILL.md", None, 10)) is None


def test_a_skill_listed_without_digests_is_not_listed_at_all():
    s = skill()
    bare = RemoteSkill(s.server, s.uri, s.name, s.description, s.frontmatter, None)
    assert "cannot be verified" in (listing_problem(bare) or "")
    assert listing_problem(s) is None
