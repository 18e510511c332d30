"""Which skills an agent gets: path-scoped activation, per-agent profiles, dependencies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemon_skills import settings
from lemon_skills.cli import main
from lemon_skills.errors import ConfigError
from lemon_skills.skills import api
from lemon_skills.skills.selection import offer, relevance
from lemon_skills.skills.selection.activation import describe, in_play, matches
from lemon_skills.tool import ToolContext
from lemon_skills.tools import read_skill, skill_manage
from tests.helpers.skills import write_skill

MIGRATIONS = "Write reversible database migrations for the orders schema with alembic."
REQUEST = "add a reversible alembic migration for the orders table"


def _path_scoped(project_skills: Path) -> None:
    write_skill(
        project_skills,
        "alembic-migrations",
        description=MIGRATIONS,
        extra='paths: "migrations/**/*.py, alembic.ini"',
    )
    write_skill(project_skills, "pdf", description="Read and split PDF files.")


def test_path_scoped_skill_is_injected_only_with_a_matching_file_in_play(project, project_skills):
    _path_scoped(project_skills)
    without = offer.render_prompt(REQUEST, cwd=project)
    other = offer.render_prompt(REQUEST, cwd=project, files=["src/app.py"])
    with_file = offer.render_prompt(REQUEST, cwd=project, files=["migrations/versions/001_init.py"])
    assert "alembic-migrations" not in without.relevant + without.listed
    assert "alembic-migrations" not in other.relevant + other.listed
    assert with_file.relevant == ("alembic-migrations",)
    # Absolute paths work too, relative to the project.
    absolute = relevance.find_relevant(REQUEST, cwd=project, files=[project / "alembic.ini"])
    assert [e.key for e in absolute] == ["alembic-migrations"]
    assert relevance.find_relevant(REQUEST, cwd=project) == []


def test_a_matching_path_scoped_skill_ranks_ahead(project, project_skills):
    write_skill(project_skills, "sql-style", description="Orders table SQL style and migrations.")
    write_skill(
        project_skills, "alembic", description="Alembic migrations.", extra="paths: [alembic.ini]"
    )
    q = "orders table migrations"
    assert [e.key for e in relevance.find_relevant(q, cwd=project)] == ["sql-style"]
    found = relevance.find_relevant(q, cwd=project, files=["alembic.ini"])
    assert [e.key for e in found][:2] == ["alembic", "sql-style"]


def test_cursor_rules_always_attached_and_described(project):
    rules = project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "tone.mdc").write_text("---\nalwaysApply: true\n---\nBe brief.\n")
    (rules / "tsx.mdc").write_text("---\nglobs: *.tsx\n---\nUse hooks.\n")
    plain = offer.render_prompt("rename a variable", cwd=project)
    assert plain.relevant == ("cursor:tone",) and "Be brief." in plain.text
    tsx = offer.render_prompt("rename a variable", cwd=project, files=["src/App.tsx"])
    assert tsx.relevant == ("cursor:tone", "cursor:tsx") and "Use hooks." in tsx.text
    entry = api.get("cursor:tsx", cwd=project)
    assert entry is not None and describe(entry) == "injected when a file in play matches *.tsx"


def test_lemon_prompt_and_show_take_files_and_say_how_a_skill_activates(
    capsys, project, project_skills
):
    _path_scoped(project_skills)
    args = ["prompt", REQUEST, "--cwd", str(project), "--json"]
    assert main([*args, "--file", "migrations/env.py"]) == 0
    assert json.loads(capsys.readouterr().out)["relevant"] == ["alembic-migrations"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["relevant"] == []
    assert main(["skill", "show", "alembic-migrations", "--cwd", str(project)]) == 0
    assert "activates: offered for relevant requests when a file in play matches" in (
        capsys.readouterr().err
    )


def test_glob_rules():
    root = Path("/p")

    def m(pattern: str, file: str) -> bool:
        return matches([pattern], [root / file], [root])

    assert m("*.ts", "src/a.ts") and not m("*.ts", "src/a.tsx")
    assert m("src/**/*.{ts,tsx}", "src/x/y/c.tsx") and not m("src/**/*.ts", "lib/a.ts")
    assert m("src/api", "src/api/v1/x.py") and not m("src/api", "src/apix/x.py")
    assert m("/docs/*.md", "docs/a.md") and not m("docs/*.md", "x/docs/a.md")
    assert not matches(["*.py"], [Path("/elsewhere/a.py")], [root])  # outside every root


def _profiles(project: Path, profiles: dict) -> None:
    (project / ".lemon").mkdir(exist_ok=True)
    (project / ".lemon" / "skills.json").write_text(
        json.dumps({"version": 1, "profiles": profiles})
    )


def _team(project_skills: Path) -> None:
    write_skill(project_skills, "git-commit", description="Write git commit messages.")
    write_skill(project_skills, "git-rebase", description="Rebase git branches safely.")
    write_skill(project_skills, "deploy-prod", description="Deploy to production with git tags.")
    write_skill(project_skills, "style-guide", description="House writing style.")


def test_sub_agent_profile_never_sees_a_denied_skill(project, project_skills):
    _team(project_skills)
    _profiles(
        project,
        {
            "reviewer": {"allow": ["git-*", "style-guide"], "deny": ["git-rebase"]},
            "main": {"deny": ["deploy-*"], "preload": ["style-guide"], "budget": 3000},
        },
    )
    allowed = {"git-commit", "style-guide"}
    assert {e.key for e in api.list_skills(cwd=project, agent="reviewer")} == allowed
    assert api.get("git-rebase", cwd=project, agent="reviewer") is None
    for q in ("rebase git branches", "deploy to production", "git"):
        found = {e.key for e in relevance.find_relevant(q, cwd=project, agent="reviewer")}
        assert found <= allowed
        rendered = offer.render_prompt(q, cwd=project, agent="reviewer")
        assert set(rendered.relevant + rendered.listed) <= allowed
        assert "git-rebase" not in rendered.text and "deploy-prod" not in rendered.text
    ctx = ToolContext(cwd=project, agent_id="reviewer")
    denied = read_skill.call({"key": "git-rebase"}, ctx)
    assert denied.is_error and "git-rebase" not in denied.text.split("\n", 1)[1]
    assert not read_skill.call({"key": "git-commit"}, ctx).is_error
    assert skill_manage.call({"action": "edit", "name": "git-rebase", "content": "x"}, ctx).is_error
    # Another agent is not limited by the reviewer's profile; main preloads and has a budget.
    assert not read_skill.call({"key": "git-rebase"}, ToolContext(cwd=project)).is_error
    main_prompt = offer.render_prompt("rebase git branches", cwd=project, agent="main")
    assert main_prompt.relevant[0] == "style-guide" and main_prompt.budget == 3000
    assert "deploy-prod" not in main_prompt.listed


def test_cli_agent_option_and_unknown_profiles(capsys, project, project_skills):
    _team(project_skills)
    _profiles(project, {"reviewer": {"allow": ["git-commit"]}})
    assert main(["skill", "list", "--json", "--agent", "reviewer", "--cwd", str(project)]) == 0
    assert [r["key"] for r in json.loads(capsys.readouterr().out)] == ["git-commit"]
    assert main(["skill", "find", "rebase", "--agent", "reviewer", "--cwd", str(project)]) == 0
    assert "git-rebase" not in capsys.readouterr().out
    assert main(["prompt", "git", "--agent", "reviwer", "--cwd", str(project)]) == 1
    assert "no skill profile for agent 'reviwer'" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        api.list_skills(cwd=project, agent="nobody")


def test_project_profile_adds_denials_to_the_global_one(agent_dir, project, project_skills):
    _team(project_skills)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills.json").write_text(
        json.dumps({"version": 1, "profiles": {"sub": {"deny": ["deploy-prod"]}}})
    )
    _profiles(project, {"sub": {"deny": ["git-rebase"]}})
    keys = {e.key for e in api.list_skills(cwd=project, agent="sub")}
    assert keys == {"git-commit", "style-guide"}


def test_skill_dependencies_are_reported_and_keep_the_skill_out_of_prompts(project, project_skills):
    settings.reset()  # the CLI wires the MCP config in; start with no provider at all
    write_skill(
        project_skills,
        "release",
        description="Cut a release of the service with a changelog.",
        extra="requires:\n  skills: [changelog]\n  any_skills: [github, gitlab]\n"
        "  mcp_servers: [issues]",
    )
    st = api.status("release", cwd=project)
    assert st.missing_skills == ("changelog",)
    assert st.missing_any_skills == ("github", "gitlab")
    assert st.missing_mcp_servers == ()  # no MCP names provider configured: not checked
    assert st.activation_state == "not_ready"
    assert offer.render_prompt("cut a release with a changelog", cwd=project).text == ""
    write_skill(project_skills, "changelog", description="Keep a changelog.")
    write_skill(project_skills, "gitlab", description="Work with GitLab.")
    settings.configure(mcp_server_names=lambda cwd: ["tracker"])
    try:
        st = api.status("release", cwd=project)
        assert (st.missing_skills, st.missing_any_skills) == ((), ())
        assert st.missing_mcp_servers == ("issues",)
        assert "release" not in offer.render_prompt("cut a release", cwd=project).listed
        settings.configure(mcp_server_names=lambda cwd: ["issues"])
        st = api.status("release", cwd=project)
        assert st.ready
        assert "release" in offer.render_prompt("cut a release", cwd=project).relevant
    finally:
        settings.reset()


def test_doctor_explains_unmet_dependencies(capsys, project, project_skills):
    write_skill(
        project_skills, "release", description="Cut a release.", extra="requires:\n  skills: [x]"
    )
    assert main(["skill", "doctor", "release", "--cwd", str(project)]) in (0, 1)
    out = capsys.readouterr().out
    assert "required skills not available: x" in out


def test_in_play_takes_relative_paths_from_cwd(project):
    play = in_play(["a/b.py"], cwd=project)
    assert play.files == (project / "a" / "b.py",)


def test_cli_checks_required_mcp_servers_against_the_mcp_config(capsys, agent_dir, project):
    settings.reset()
    skills = project / ".lemon" / "skill"
    write_skill(
        skills, "triage", description="Triage issues.", extra="requires:\n  mcp_servers: [issues]"
    )
    assert main(["skill", "status", "triage", "--json", "--cwd", str(project)]) == 0
    assert json.loads(capsys.readouterr().out)["missing_mcp_servers"] == ["issues"]
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "mcp.json").write_text(
        json.dumps({"mcpServers": {"issues": {"command": "issues-server"}}})
    )
    assert main(["skill", "status", "triage", "--json", "--cwd", str(project)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["missing_mcp_servers"] == [] and data["ready"]
    settings.reset()


def test_a_broken_profile_is_reported_and_refuses_its_agent_but_keeps_the_disabled_list(
    project, project_skills
):
    _team(project_skills)
    (project / ".lemon" / "skills.json").write_text(
        json.dumps(
            {"version": 1, "disabled": ["deploy-prod"], "profiles": {"sub": {"allow": "git-*"}}}
        )
    )
    diags = [d for d in api.diagnostics(cwd=project) if d.code == "corrupt_profiles"]
    assert diags and "sub" in diags[0].reason
    with pytest.raises(ConfigError, match="no skill profile for agent 'sub'"):
        api.list_skills(cwd=project, agent="sub")
    assert not api.get("deploy-prod", cwd=project).enabled  # type: ignore[union-attr]
