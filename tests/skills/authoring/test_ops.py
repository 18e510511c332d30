"""The write side of skills called directly (what ``skill_manage`` wraps): an action either
happens whole and the registry sees it at once, or raises and changes nothing."""

from __future__ import annotations

import pytest

from lemon_skills.errors import SkillWriteError
from lemon_skills.skills import api
from lemon_skills.skills.authoring import ops

SKILL_MD = "---\nname: notes\ndescription: Keep release notes tidy.\n---\n\n## Steps\n\nOne. One.\n"


def keys(project):
    return {e.key for e in api.list_skills(cwd=project)}


def enabled(project):
    return {e.key: e.enabled for e in api.list_skills(cwd=project)}


def test_project_scope_writes_under_the_project_and_needs_a_cwd(project, agent_dir):
    t = ops.target("project", project, "notes", agent_id="a1")
    assert t.skill_dir == project / ".lemon" / "skill" / "notes"
    assert ops.target("global", None, "notes").root == agent_dir / "skill"
    with pytest.raises(SkillWriteError, match="project scope requires cwd"):
        ops.target("project", None, "notes")


def test_create_then_patch_are_seen_at_once_and_a_failed_patch_changes_nothing(project):
    t = ops.target("project", project, "notes", agent_id="a1")
    created = ops.run("create", t, {"content": SKILL_MD})
    assert created.get("action") == "create" and "notes" in keys(project)
    skill_md = t.skill_dir / "SKILL.md"
    with pytest.raises(SkillWriteError, match="matched 2 times"):
        ops.run("patch", t, {"old_string": "One.", "new_string": "Two."})
    assert skill_md.read_text() == SKILL_MD
    patched = ops.run("patch", t, {"old_string": "One.", "new_string": "Two.", "replace_all": True})
    assert patched.get("replacements") == 2 and "Two. Two." in skill_md.read_text()
    assert not list(t.root.glob(".*"))  # no staging copy left beside the skill


def test_unknown_actions_and_missing_names_are_refused():
    t = ops.target("global", None, "")
    with pytest.raises(SkillWriteError, match="Unknown action 'rename'. Use create, edit"):
        ops.run("rename", t, {})
    with pytest.raises(SkillWriteError, match="missing required string parameter: name"):
        ops.run("create", t, {"content": SKILL_MD})


def test_archive_and_restore_switch_the_skill_off_and_on(project):
    t = ops.target("project", project, "notes", agent_id="a1")
    ops.run("create", t, {"content": SKILL_MD})
    assert ops.run("archive", t, {}).get("lifecycle_state") == "archived"
    assert enabled(project) == {"notes": False}
    assert ops.run("restore", t, {}).get("lifecycle_state") == "active"
    assert enabled(project) == {"notes": True}
    report = ops.run("report", ops.target("project", project), {})
    assert [row["name"] for row in report.get("skills")] == ["notes"]
