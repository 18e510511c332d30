from __future__ import annotations

import os

import pytest

from lemon_skills.skills.format import confine


def _skill(tmp_path):
    skill = tmp_path / "pdf"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: pdf\n---\nbody\n", "utf-8")
    return skill


def test_a_regular_skill_md_is_read(tmp_path):
    assert confine.read_text(_skill(tmp_path) / "SKILL.md").endswith("body\n")


def test_a_symlink_escaping_the_skill_dir_is_refused(tmp_path):
    skill = _skill(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("token", "utf-8")
    (skill / "SKILL.md").unlink()
    os.symlink(secret, skill / "SKILL.md")
    with pytest.raises(PermissionError) as caught:
        confine.read_text(skill / "SKILL.md")
    assert caught.value.strerror == confine.REFUSED


def test_a_skill_dir_that_is_itself_a_symlink_is_fine(tmp_path):
    real = _skill(tmp_path)
    link = tmp_path / "linked"
    os.symlink(real, link)
    assert confine.read_text(link / "SKILL.md").startswith("---")


def test_a_sibling_with_a_common_prefix_is_outside(tmp_path):
    skill = _skill(tmp_path)
    sibling = tmp_path / "pdf-evil"
    sibling.mkdir()
    assert not confine.inside(sibling / "x", skill)
    assert confine.inside(skill, skill)
    assert confine.inside(skill / "sub" / "x", skill)


def test_an_explicit_root_allows_links_within_it(tmp_path):
    rules = tmp_path / "rules"
    (rules / "shared").mkdir(parents=True)
    (rules / "shared" / "a.mdc").write_text("rule", "utf-8")
    (rules / "team").mkdir()
    os.symlink(rules / "shared" / "a.mdc", rules / "team" / "a.mdc")
    assert confine.read_text(rules / "team" / "a.mdc", rules) == "rule"
    with pytest.raises(PermissionError):
        confine.read_text(rules / "team" / "a.mdc")
