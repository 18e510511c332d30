from __future__ import annotations

from lemon_skills.skills import api
from lemon_skills.skills.catalog.doctor import doctor
from tests.helpers.skills import write_skill


def _one(key, project):
    [report] = doctor(key, cwd=project)
    return report


def test_a_healthy_skill_is_active_and_says_where_it_is(project, project_skills):
    write_skill(project_skills, "pdf")
    report = _one("pdf", project)
    assert report.state == "active"
    assert report.reasons == (f"active (project skill at {project_skills / 'pdf'})",)


def test_a_missing_skill_suggests_close_names(project, project_skills):
    write_skill(project_skills, "pdf-tools")
    report = _one("pdf-tool", project)
    assert report.state == "missing"
    assert "did you mean pdf-tools?" in report.reasons[0]


def test_unmet_requirements_are_named(project, project_skills):
    write_skill(
        project_skills,
        "needs",
        extra="requires:\n  bins: [no-such-binary-xyz]\n  env: [NO_SUCH_VAR_XYZ]",
    )
    reasons = " | ".join(_one("needs", project).reasons)
    assert "missing binaries on PATH: no-such-binary-xyz" in reasons
    assert "unset environment variables: NO_SUCH_VAR_XYZ" in reasons


def test_a_disabled_skill_says_how_to_enable_it(project, project_skills):
    write_skill(project_skills, "pdf")
    api.disable("pdf", scope="project", cwd=project)
    report = _one("pdf", project)
    assert any("lemon skill enable pdf --project" in r for r in report.reasons)


def test_a_skill_that_fails_to_load_is_reported_with_its_reason(project, project_skills):
    write_skill(project_skills, "broken", text="---\nname: [unclosed\n---\nbody\n")
    report = _one("broken", project)
    assert report.state == "missing"
    assert "failed to load" in report.reasons[0]


def test_without_a_key_every_skill_is_reported(project, project_skills):
    write_skill(project_skills, "a")
    write_skill(project_skills, "b")
    assert [r.key for r in doctor(cwd=project)] == ["a", "b"]


def test_a_skill_off_by_its_namespace_names_the_namespace_command(project):
    from tests.helpers.hosts import claude_plugin

    claude_plugin(project, name="review")
    api.disable("review:*", cwd=project)
    [reason] = _one("review:conventional-commits", project).reasons
    assert "disabled by its namespace review:*" in reason
    assert "(run `lemon skill enable 'review:*'`)" in reason
