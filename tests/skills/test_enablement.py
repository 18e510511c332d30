from __future__ import annotations

import json

import pytest

import lemon_skills
from lemon_skills.errors import ConfigError, SkillNotFound
from tests.helpers.skills import write_skill


def test_disable_defaults_to_global_scope(project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    lemon_skills.disable("a", cwd=project)
    data = json.loads((agent_dir / "skills.json").read_text("utf-8"))
    assert data["disabled"] == ["a"] and data["version"] == 1
    assert not lemon_skills.get("a", cwd=project).enabled
    assert not (project / ".lemon" / "skills.json").exists()


def test_project_scope(project, project_skills):
    write_skill(project_skills, "a")
    lemon_skills.disable("a", cwd=project, global_=False)
    data = json.loads((project / ".lemon" / "skills.json").read_text("utf-8"))
    assert data["disabled"] == ["a"]
    assert not lemon_skills.get("a", cwd=project).enabled
    lemon_skills.enable("a", cwd=project, scope="project")
    assert lemon_skills.get("a", cwd=project).enabled


def test_disabled_in_either_scope_means_disabled(project, project_skills):
    write_skill(project_skills, "g-off")
    write_skill(project_skills, "p-off")
    lemon_skills.disable("g-off", cwd=project)
    lemon_skills.disable("p-off", cwd=project, scope="project")
    # A project list must add to the global one, never replace it.
    assert not lemon_skills.get("g-off", cwd=project).enabled
    assert not lemon_skills.get("p-off", cwd=project).enabled
    lemon_skills.enable("p-off", cwd=project)  # global enable leaves the project entry
    assert not lemon_skills.get("p-off", cwd=project).enabled


def test_disabled_skills_never_appear_in_relevance_or_prompt(project, project_skills):
    write_skill(project_skills, "database", description="Use for database migrations and SQL")
    write_skill(project_skills, "react", description="Build React components and hooks")
    write_skill(project_skills, "k8s", description="Debug Kubernetes pods with kubectl")
    write_skill(project_skills, "api", description="Design REST endpoints and status codes")
    assert [e.key for e in lemon_skills.find_relevant("database migrations", cwd=project)] == [
        "database"
    ]
    lemon_skills.disable("database", cwd=project)
    assert lemon_skills.find_relevant("database migrations", cwd=project) == []
    assert "database" not in lemon_skills.render_prompt("database migrations", cwd=project).text


def test_unknown_key_is_refused_with_suggestion(project, project_skills):
    write_skill(project_skills, "database")
    with pytest.raises(SkillNotFound) as err:
        lemon_skills.disable("databse", cwd=project)
    assert err.value.suggestions == ("database",)


def test_corrupt_skills_json_is_reported_and_never_overwritten(project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    agent_dir.mkdir(parents=True, exist_ok=True)
    path = agent_dir / "skills.json"
    path.write_text('{"disabled": ["a",', "utf-8")
    assert lemon_skills.get("a", cwd=project) is not None
    diags = [d for d in lemon_skills.diagnostics(cwd=project) if d.code == "corrupt_state"]
    assert diags and diags[0].path == path
    with pytest.raises(ConfigError, match="corrupt JSON"):
        lemon_skills.disable("a", cwd=project)
    assert path.read_text("utf-8") == '{"disabled": ["a",'


def test_wrong_shape_is_a_config_error(project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills.json").write_text('{"disabled": "a"}', "utf-8")
    with pytest.raises(ConfigError, match="list of skill keys"):
        lemon_skills.disable("a", cwd=project)


def test_other_keys_in_skills_json_are_preserved(project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills.json").write_text(
        json.dumps({"version": 1, "skills": {"a": {"env": {"X": "1"}}}, "custom": True}), "utf-8"
    )
    lemon_skills.disable("a", cwd=project)
    data = json.loads((agent_dir / "skills.json").read_text("utf-8"))
    assert data["custom"] is True and data["skills"] == {"a": {"env": {"X": "1"}}}


@pytest.mark.parametrize("scope", ["global", "project"])
def test_an_unreadable_skills_json_fails_closed_and_every_command_says_why(
    project, project_skills, agent_dir, capsys, scope
):
    from lemon_skills.cli import main

    write_skill(project_skills, "api-design", description="Design HTTP APIs.")
    lemon_skills.disable("api-design", cwd=project, scope=scope)
    path = (agent_dir if scope == "global" else project / ".lemon") / "skills.json"
    path.write_text(path.read_text("utf-8")[:20], "utf-8")  # truncated
    assert not lemon_skills.get("api-design", cwd=project).enabled
    assert "api-design" not in lemon_skills.render_prompt("design an HTTP API", cwd=project).text
    capsys.readouterr()
    for argv in (["skill", "list"], ["prompt", "design an HTTP API"], ["skill", "doctor"]):
        main([*argv, "--cwd", str(project)])
        out, err = capsys.readouterr()
        lines = [ln for ln in err.splitlines() if str(path) in ln]
        assert len(lines) == 1 and "move the file away" in lines[0], argv
        assert "<name>api-design" not in out
    main(["skill", "doctor", "api-design", "--cwd", str(project)])
    out = capsys.readouterr().out
    assert str(path) in out.split("\n", 2)[1]  # named first, right under the key


def test_a_skills_json_or_lock_from_a_newer_release_is_never_rewritten(
    project, project_skills, agent_dir
):
    from lemon_skills.skills.install import lockfile

    write_skill(project_skills, "a")
    agent_dir.mkdir(parents=True, exist_ok=True)
    state = agent_dir / "skills.json"
    state.write_text('{"version": 99, "disabled": [], "future": {"x": 1}}', "utf-8")
    with pytest.raises(ConfigError, match="newer lemon-skills"):
        lemon_skills.disable("a", cwd=project)
    lock = agent_dir / "skills.lock.json"
    lock.write_text('{"version": 2, "skills": {}}', "utf-8")
    with pytest.raises(ConfigError, match="newer lemon-skills"):
        lockfile.put(lock, "a", {"key": "a"})
    assert json.loads(state.read_text("utf-8"))["future"] == {"x": 1}
    assert json.loads(lock.read_text("utf-8")) == {"version": 2, "skills": {}}
