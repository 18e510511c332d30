"""What ``lemon mcp serve`` publishes for the skills of a project: every file with its size and
digest, rebuilt only when a file changed, bounded, and every skill under a name the skills
extension accepts."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from lemon_skills.skills.catalog.registry import view
from lemon_skills.skills.remote.model import ORIGINAL_NAME_KEY
from lemon_skills.skills.remote.verify import frontmatter_problem
from lemon_skills.tools.serve import catalog as catalog_module
from lemon_skills.tools.serve.catalog import Catalog, spec_name
from tests.helpers.skills import write_skill


def built(project: Path) -> Catalog:
    c = Catalog()
    c.update(view(project))
    return c


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_every_file_is_listed_with_its_size_and_sha256(project, project_skills):
    pdf = write_skill(project_skills, "pdf", description="Fill PDF forms.")
    (pdf / "references").mkdir()
    (pdf / "references" / "guide.md").write_text("Guide.\n")
    (entry,) = built(project).wire
    assert entry["uri"] == "skill://pdf/SKILL.md"
    assert entry["frontmatter"] == {"name": "pdf", "description": "Fill PDF forms."}
    skill_md = (pdf / "SKILL.md").read_bytes()
    assert entry["resources"] == [
        {"uri": "skill://pdf/SKILL.md", "digest": sha(skill_md), "size": len(skill_md)},
        {"uri": "skill://pdf/references/guide.md", "digest": sha(b"Guide.\n"), "size": 7},
    ]


def test_a_folder_named_apart_from_its_skill_is_a_path_prefix(project, project_skills):
    write_skill(project_skills, "billing-tools", name="refunds")
    write_skill(project_skills, "Support Desk", name="triage")
    assert [e["uri"] for e in built(project).wire] == [
        "skill://support-desk/triage/SKILL.md",  # a folder name no uri host can be, mapped
        "skill://billing-tools/refunds/SKILL.md",
    ]


def test_a_rebuild_with_no_change_is_no_new_generation_and_an_edit_is(project, project_skills):
    pdf = write_skill(project_skills, "pdf")
    c = built(project)
    before = c.generation
    assert c.update(view(project)) is False and c.generation == before
    (pdf / "SKILL.md").write_text((pdf / "SKILL.md").read_text() + "\nMore.\n")
    st = (pdf / "SKILL.md").stat()
    os.utime(pdf / "SKILL.md", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert c.update(view(project)) is True and c.generation == before + 1
    assert c.wire[0]["resources"][0]["digest"] == sha((pdf / "SKILL.md").read_bytes())


def test_links_hidden_and_tool_folders_are_not_served(project, project_skills, tmp_path):
    pdf = write_skill(project_skills, "pdf")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (pdf / "link.txt").symlink_to(outside)
    for folder in (".git", "node_modules", "__pycache__"):
        (pdf / folder).mkdir()
        (pdf / folder / "x.md").write_text("x")
    (pdf / "scripts").mkdir()
    (pdf / "scripts" / "run.sh").write_text("echo hi\n")
    (entry,) = built(project).wire
    assert [r["uri"] for r in entry["resources"]] == [
        "skill://pdf/SKILL.md",
        "skill://pdf/scripts/run.sh",
    ]


def test_a_skill_over_the_bounds_is_skipped_with_its_reason(project, project_skills, monkeypatch):
    big = write_skill(project_skills, "big")
    for i in range(3):
        (big / f"f{i}.md").write_text("x")
    write_skill(project_skills, "small")
    monkeypatch.setattr(catalog_module, "MAX_FILES", 2)
    c = built(project)
    assert [e["uri"] for e in c.wire] == ["skill://small/SKILL.md"]
    assert c.skipped == ["big: more than 2 files"]


def test_a_name_outside_the_rules_is_served_under_its_folder_name(project, project_skills):
    folder = write_skill(
        project_skills, "burp-testing", name="Burp Suite Testing", extra="license: MIT"
    )
    on_disk = (folder / "SKILL.md").read_bytes()
    c = built(project)
    (entry,) = c.wire
    assert entry["uri"] == "skill://burp-testing/SKILL.md"
    front = entry["frontmatter"]
    assert front["name"] == "burp-testing" and front["license"] == "MIT"
    assert front["metadata"] == {ORIGINAL_NAME_KEY: "Burp Suite Testing"}
    (_, served), *_ = c.files.values()
    assert served.data is not None
    # The served SKILL.md carries the listed frontmatter, digest and size; the body is kept.
    assert frontmatter_problem(front, served.data.decode()) is None
    assert entry["resources"][0] == {
        "uri": entry["uri"],
        "digest": sha(served.data),
        "size": len(served.data),
    }
    assert served.data.endswith(b"Do the thing.\n")
    assert (folder / "SKILL.md").read_bytes() == on_disk
    assert c.renamed() == [("burp-testing", "Burp Suite Testing", "burp-testing")]


def test_names_that_cannot_be_mapped_or_collide_are_skipped_with_a_precise_reason(
    project, project_skills
):
    write_skill(project_skills, "___", name="Only Symbols")
    write_skill(project_skills, "Burp Suite", name="Burp Suite")
    write_skill(project_skills, "burp-suite")
    c = built(project)
    assert [e["uri"] for e in c.wire] == ["skill://burp-suite/SKILL.md"]
    assert sorted(c.skipped) == [
        "Burp Suite: its name is served by another skill",
        "___: its name 'Only Symbols' breaks the Agent Skills naming rules (1-64 lowercase "
        "letters, digits and single hyphens) and its folder name '___' gives no valid one to "
        "serve it under",
    ]


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("pdf-tools", "pdf-tools"),
        ("My_Skill.v2", "my-skill-v2"),
        ("--Odd--Name--", "odd-name"),
        ("x" * 70, "x" * 64),
        ("___", None),
    ],
)
def test_the_name_a_folder_gives(folder, expected):
    assert spec_name(folder) == expected
