from __future__ import annotations

import os

import pytest

from lemon_skills.errors import SkillWriteError
from lemon_skills.skills.authoring import rules

GOOD = "---\nname: pdf-tools\ndescription: Merge PDF files.\n---\n\n## Usage\n\nRun qpdf.\n"


@pytest.mark.parametrize(("raw", "name"), [(" pdf-tools ", "pdf-tools"), ("v1.2_x", "v1.2_x")])
def test_valid_names_are_trimmed(raw, name):
    assert rules.check_name(raw) == name


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (None, "missing"),
        ("  ", "non-empty"),
        ("a" * 65, "exceeds 64"),
        ("PDF", "invalid skill name"),
        ("../x", "invalid skill name"),
        ("-x", "invalid skill name"),
    ],
)
def test_invalid_names_say_what_a_valid_one_looks_like(raw, needle):
    with pytest.raises(SkillWriteError, match=needle):
        rules.check_name(raw)


def test_a_complete_skill_md_passes():
    assert rules.check_skill_md(GOOD) == []


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("Just instructions.", "must start with frontmatter"),
        ("---\nname: x\n---\nbody\n", "must include description"),
        ("---\nname: x\ndescription: '  '\n---\nbody\n", "description must be non-empty"),
        ("---\nname: x\ndescription: d\n---\n\n", "must include instructions"),
        ("x" * (rules.MAX_SKILL_CHARS + 1), "exceeds"),
    ],
)
def test_incomplete_skill_md_is_refused_with_the_fix(text, needle):
    with pytest.raises(SkillWriteError, match=needle):
        rules.check_skill_md(text)


@pytest.mark.parametrize(
    ("raw", "path"),
    [("scripts/run.sh", "scripts/run.sh"), ("./references//a.md", "references/a.md")],
)
def test_supporting_paths_are_normalised(raw, path):
    assert rules.supporting_path(raw) == path


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("/etc/passwd", "relative"),
        ("scripts/../../x", "relative"),
        ("~/x", "relative"),
        ("src/x.py", "under one of"),
        ("SKILL.md", "use action=edit"),
        ("scripts", "include a filename"),
        ("scripts/.env", "hidden"),
        ("", "missing"),
    ],
)
def test_bad_supporting_paths_are_refused(raw, needle):
    with pytest.raises(SkillWriteError, match=needle):
        rules.supporting_path(raw)


def test_skill_md_itself_only_where_allowed():
    assert rules.supporting_path("SKILL.md", allow_skill_md=True) == ""
    assert rules.supporting_path(None, allow_skill_md=True) == ""


def test_supporting_file_limits():
    rules.check_supporting("x" * 10)
    with pytest.raises(SkillWriteError, match="characters"):
        rules.check_supporting("x" * (rules.MAX_FILE_CHARS + 1))


def test_writing_through_a_symlinked_folder_is_refused(tmp_path):
    skill = tmp_path / "skill"
    skill.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, skill / "scripts")
    with pytest.raises(SkillWriteError, match="symlink: scripts"):
        rules.refuse_symlinks(skill, "scripts/run.sh")
    rules.refuse_symlinks(skill, "references/new/a.md")  # not there yet: created as real dirs


def test_gate_passes_a_clean_skill_and_blocks_hidden_characters(tmp_path):
    skill = tmp_path / "pdf-tools"
    skill.mkdir()
    (skill / "SKILL.md").write_text(GOOD, "utf-8")
    assert rules.gate(skill, name="pdf-tools").status == "pass"
    (skill / "references").mkdir()
    (skill / "references" / "a.md").write_text("see\u200bthis\n", "utf-8")
    verdict = rules.gate(skill, name="pdf-tools")
    assert verdict.status == "block"
    assert any("references/a.md: invisible character U+200B" in b for b in verdict.blocking)


def test_gate_blocks_a_missing_skill_md(tmp_path):
    verdict = rules.gate(tmp_path, name="x")
    assert verdict.status == "block"
    assert "SKILL.md is missing" in verdict.blocking
