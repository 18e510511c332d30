from __future__ import annotations

import re

import pytest

from lemon_skills import approvals
from lemon_skills.errors import SkillWriteError
from lemon_skills.skills.authoring import consent
from lemon_skills.skills.authoring.ops import target
from lemon_skills.skills.install import lockfile
from tests.helpers.skills import write_skill


def _target(project, project_skills, *, by_agent):
    write_skill(project_skills, "pdf")
    t = target("project", project, "pdf", agent_id="agent-1")
    if by_agent:
        t.usage().record_created("pdf", agent_id="agent-1")
    return t


def _pending_id(error):
    return re.search(r"approval (\S+) is pending", str(error)).group(1)


def test_an_agent_may_change_what_it_created(project, project_skills):
    t = _target(project, project_skills, by_agent=True)
    assert consent.agent_authored(t)
    consent.authorise(t, "delete", {})


def test_an_install_over_the_key_takes_the_skill_away_from_the_agent(project, project_skills):
    t = _target(project, project_skills, by_agent=True)
    lockfile.put(lockfile.lock_path("project", project), "pdf", {"key": "pdf"})
    assert not consent.agent_authored(t)


def test_reading_actions_are_never_guarded(project, project_skills):
    consent.authorise(_target(project, project_skills, by_agent=False), "view", {})


def test_another_skill_needs_an_approval_bound_to_the_exact_change(project, project_skills):
    t = _target(project, project_skills, by_agent=False)
    params = {"content": "new text"}
    with pytest.raises(SkillWriteError, match="needs the user's approval") as asked:
        consent.authorise(t, "edit", params)
    approval_id = _pending_id(asked.value)
    with pytest.raises(SkillWriteError, match="not approved"):
        consent.authorise(t, "edit", {**params, "approval_id": approval_id})
    approvals.approve(approval_id)
    with pytest.raises(SkillWriteError, match="another change"):
        consent.authorise(t, "edit", {"content": "other text", "approval_id": approval_id})
    consent.authorise(t, "edit", {**params, "approval_id": approval_id})


def test_an_approval_is_void_once_the_skill_changed(project, project_skills):
    t = _target(project, project_skills, by_agent=False)
    with pytest.raises(SkillWriteError) as asked:
        consent.authorise(t, "delete", {})
    approval_id = _pending_id(asked.value)
    approvals.approve(approval_id)
    (t.skill_dir / "SKILL.md").write_text("---\nname: pdf\n---\nswapped\n", "utf-8")
    with pytest.raises(SkillWriteError, match="another change"):
        consent.authorise(t, "delete", {"approval_id": approval_id})
