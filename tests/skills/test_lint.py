from __future__ import annotations

from lemon_skills.skills.format.lint import lint_file, lint_text
from tests.helpers.skills import write_skill


def rules(text, dir_name="my-skill", strict=False):
    return {f.rule: f.severity for f in lint_text(text, dir_name=dir_name, strict=strict)}


GOOD = "---\nname: my-skill\ndescription: Does a thing when you need it done.\n---\nBody\n"


def test_valid_skill_has_no_findings():
    assert rules(GOOD) == {}


def test_frontmatter_required():
    assert rules("# Just a body\n")["frontmatter-missing"] == "error"


def test_name_rules_are_collected_not_first_fail():
    r = rules(
        "---\nname: Bad--Name-\ndescription: Does a thing when needed.\n---\nb",
        dir_name="Bad--Name-",
    )
    assert r["name-case"] == "error"
    assert r["name-hyphen"] == "error"


def test_name_charset_length_and_dir_match():
    assert "name-chars" in rules(
        "---\nname: under_score\ndescription: a b c d\n---\nb", dir_name="under_score"
    )
    long = "a" * 65
    assert "name-length" in rules(f"---\nname: {long}\ndescription: a b c d\n---\nb", dir_name=long)
    assert "name-dir-mismatch" in rules(GOOD, dir_name="other")
    assert "name-missing" in rules("---\ndescription: a b c d\n---\nb")


def test_unicode_lowercase_names_are_allowed_but_lookalikes_are_not():
    assert rules("---\nname: данные\ndescription: a b c d\n---\nb", dir_name="данные") == {}
    assert "name-lookalike" in rules(
        "---\nname: рdf-tools\ndescription: a b c d\n---\nb", dir_name="рdf-tools"
    )


def test_description_rules():
    assert "description-missing" in rules("---\nname: my-skill\n---\nb")
    too_long = "x " * 600
    assert "description-length" in rules(f"---\nname: my-skill\ndescription: {too_long}\n---\nb")


def test_unknown_fields_are_info_lemon_fields_warn_and_strict_makes_both_errors():
    text = "---\nname: my-skill\ndescription: a b c d\ntags: [x]\nfoo: 1\n---\nb"
    assert rules(text)["unknown-field"] == "info"
    assert rules(text)["extension-field"] == "warning"
    assert rules(text, strict=True)["extension-field"] == "error"
    assert rules(text, strict=True)["unknown-field"] == "error"


def test_other_hosts_fields_are_info_and_do_not_fail_the_lint():
    text = (
        "---\nname: my-skill\ndescription: a b c d\nargument-hint: [file]\n"
        "context: fork\nmodel: sonnet\npaths: src/**/*.py\n---\nb"
    )
    found = [f for f in lint_text(text, dir_name="my-skill") if f.rule == "unknown-field"]
    assert {f.severity for f in found} == {"info"} and len(found) == 4
    assert "other hosts" in found[0].message


def test_duplicate_keys_are_errors():
    text = "---\nname: my-skill\ndescription: a b c d\nname: my-skill\n---\nb"
    found = [f for f in lint_text(text, dir_name="my-skill") if f.rule == "duplicate-key"]
    assert found and found[0].line == 4


def test_invisible_characters_are_errors_with_line():
    text = GOOD + "hidden\U000e0041\U000e0042 here\n"
    found = [f for f in lint_text(text, dir_name="my-skill") if f.rule == "invisible-unicode"]
    assert found and found[0].line == 6


def test_bom_warns_and_empty_body_warns():
    assert rules("\ufeff" + GOOD)["bom"] == "warning"
    assert rules("---\nname: my-skill\ndescription: a b c d\n---\n")["body-empty"] == "warning"


def test_compatibility_and_metadata_types():
    text = (
        "---\nname: my-skill\ndescription: a b c d\ncompatibility: "
        + "x" * 501
        + "\nmetadata: [1]\n---\nb"
    )
    r = rules(text)
    assert r["compatibility"] == "error" and r["metadata-type"] == "error"


def test_lint_file_reports_missing_and_bad_encoding(tmp_path):
    assert not lint_file(tmp_path / "nope" / "SKILL.md").ok
    p = tmp_path / "x" / "SKILL.md"
    p.parent.mkdir()
    p.write_bytes(b"\xff\xfe")
    assert lint_file(p).findings[0].rule == "encoding"


def test_the_readme_example_and_the_bundled_examples_pass_strict_lint():
    import re
    from pathlib import Path

    from lemon_skills.skills.format.lint import lint_file, lint_text

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text("utf-8")
    example = re.search(r"## SKILL\.md\n\n```markdown\n(.*?)```", readme, re.S)
    assert example is not None
    findings = lint_text(example.group(1), dir_name="kubernetes-debugging", strict=True)
    assert [f for f in findings if f.severity == "error"] == []
    bundled = sorted((root / "examples").rglob("SKILL.md"))
    assert bundled
    for path in bundled:
        assert lint_file(path, strict=True).ok, path


def test_lemon_fields_under_metadata_lemon_are_read(project, project_skills):
    import lemon_skills

    write_skill(
        project_skills, "k", extra="metadata:\n  lemon:\n    tags: [ops]\n    keywords: [kubectl]"
    )
    m = lemon_skills.get("k", cwd=project).manifest
    assert (m.tags, m.keywords) == (("ops",), ("kubectl",))


def test_a_directory_is_searched_for_skills_the_way_discovery_finds_them(tmp_path):
    from lemon_skills.skills.format.lint import skill_files

    repo = tmp_path / "repo"
    found = [
        write_skill(repo / "app" / ".lemon" / "skill", "project-one"),
        write_skill(repo / "app" / ".agents" / "skills", "harness-one"),
        write_skill(repo / "plugins" / "deploy" / "skills", "nested-one"),
    ]
    write_skill(repo / ".git" / "hooks", "in-git")
    write_skill(repo / "app" / ".venv" / "pkg", "in-venv")
    write_skill(repo / "app" / ".lemon" / "skill", ".staging-project-one")
    write_skill(repo / "app" / ".lemon" / "backups", "old-copy")
    write_skill(found[0], "inside-a-skill")
    (repo / "plugins" / "loop").symlink_to(repo)
    files = skill_files([repo])
    assert sorted(files) == sorted(d / "SKILL.md" for d in found)
