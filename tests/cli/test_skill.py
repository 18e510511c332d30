"""``lemon skill ...``: list, show, status, enable/disable, refresh, lint and doctor."""

from __future__ import annotations

import json
import subprocess
import sys

from lemon_skills.cli import main
from tests.helpers.skills import write_skill


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_json_shape(capsys, project, project_skills, global_skills):
    write_skill(project_skills, "p1", description="project skill")
    write_skill(global_skills, "g1", description="global skill")
    code, out, _ = run(capsys, "skill", "list", "--json", "--cwd", str(project))
    assert code == 0
    data = json.loads(out)
    assert [d["key"] for d in data] == ["g1", "p1"]
    for d in data:
        assert {"key", "name", "description", "source", "path", "enabled"} <= set(d)
    assert {d["key"]: d["source"] for d in data} == {"g1": "global", "p1": "project"}


def test_list_diagnostics_shows_shadowing_and_bad_files(
    capsys, project, project_skills, global_skills
):
    write_skill(project_skills, "dup")
    write_skill(global_skills, "dup")
    write_skill(project_skills, "bad", text="---\nname: [x\n---\n")
    code, out, _ = run(capsys, "skill", "list", "--diagnostics", "--cwd", str(project))
    assert code == 0
    assert "shadowed by project skill" in out
    assert "invalid YAML" in out
    code, out, _ = run(capsys, "skill", "list", "--json", "--diagnostics", "--cwd", str(project))
    codes = {d["code"] for d in json.loads(out)["diagnostics"]}
    assert {"shadowed", "invalid_frontmatter"} <= codes


def test_show_prints_skill_file(capsys, project, project_skills):
    write_skill(project_skills, "s", body="## Heading\n\nContent here\n")
    code, out, _ = run(capsys, "skill", "show", "s", "--cwd", str(project))
    assert code == 0 and "Content here" in out


def test_status_json_missing_binary(capsys, project, project_skills, monkeypatch):
    monkeypatch.setenv("PATH", "")
    write_skill(project_skills, "k8s", extra="requires:\n  bins: [kubectl]")
    code, out, _ = run(capsys, "skill", "status", "k8s", "--json", "--cwd", str(project))
    data = json.loads(out)
    assert data["ready"] is False and data["missing_bins"] == ["kubectl"]
    assert code == 0


def test_status_unknown_key_exits_non_zero(capsys, project):
    code, out, _ = run(capsys, "skill", "status", "ghost", "--json", "--cwd", str(project))
    assert code == 1 and json.loads(out)["error"] == "Skill not found: ghost"


def test_status_of_a_mistyped_key_suggests_the_close_one(capsys, project, project_skills):
    write_skill(project_skills, "view-pdf")
    code, out, err = run(capsys, "skill", "status", "view-pd", "--cwd", str(project))
    assert code == 1 and "error: Skill not found: view-pd" in err
    assert "did you mean view-pdf?" in err


def test_lint_of_a_directory_without_skills_says_so(capsys, tmp_path):
    code, out, err = run(capsys, "skill", "lint", str(tmp_path))
    assert code == 1 and out == ""
    assert f"no SKILL.md found in {tmp_path}" in err
    assert "hint:" in err


def test_doctor_with_no_skills_says_how_to_add_one(capsys, project):
    code, out, err = run(capsys, "skill", "doctor", "--cwd", str(project))
    assert code == 0 and out == ""
    assert "no skills found; create one in .lemon/skill/<key>/SKILL.md" in err


def test_enable_disable_project_flag(capsys, project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    code, out, _ = run(capsys, "skill", "disable", "a", "--project", "--cwd", str(project))
    assert code == 0 and "disabled in project scope" in out
    assert json.loads((project / ".lemon" / "skills.json").read_text("utf-8"))["disabled"] == ["a"]
    code, out, err = run(capsys, "skill", "enable", "a", "--cwd", str(project))
    assert code == 0 and "still disabled in the project scope" in err
    code, _, _ = run(capsys, "skill", "enable", "a", "--project", "--cwd", str(project))
    _, out, _ = run(capsys, "skill", "list", "--json", "--cwd", str(project))
    assert json.loads(out)[0]["enabled"] is True


def test_global_flag_picks_the_global_scope_and_excludes_project(
    capsys, project, project_skills, agent_dir
):
    write_skill(project_skills, "a")
    code, out, _ = run(capsys, "skill", "disable", "a", "--global", "--cwd", str(project))
    assert code == 0 and "disabled in global scope" in out
    assert json.loads((agent_dir / "skills.json").read_text("utf-8"))["disabled"] == ["a"]
    code, _, err = run(capsys, "skill", "enable", "a", "--project", "--global")
    assert code == 2 and "--project and --global exclude each other" in err


def test_unknown_key_error_is_one_line_with_hint(capsys, project, project_skills):
    write_skill(project_skills, "database")
    code, out, err = run(capsys, "skill", "disable", "databse", "--cwd", str(project))
    assert code == 1
    assert err.splitlines()[0] == "error: Skill not found: databse"
    assert "did you mean database?" in err
    assert "Traceback" not in err


def test_lint_exit_codes_and_json(capsys, tmp_path):
    good = write_skill(tmp_path / "skills", "good", description="Does good things for users.")
    bad = write_skill(tmp_path / "skills", "bad", name="Bad_Name")
    code, _, _ = run(capsys, "skill", "lint", str(good))
    assert code == 0
    code, out, _ = run(capsys, "skill", "lint", "--json", str(tmp_path / "skills"))
    assert code == 1
    reports = {r["path"]: r for r in json.loads(out)}
    assert reports[str(bad / "SKILL.md")]["ok"] is False
    assert reports[str(good / "SKILL.md")]["ok"] is True


def test_doctor_explains_disabled_and_shadowed(capsys, project, project_skills, global_skills):
    write_skill(project_skills, "dup")
    write_skill(global_skills, "dup")
    run(capsys, "skill", "disable", "dup", "--cwd", str(project))
    code, out, _ = run(capsys, "skill", "doctor", "dup", "--cwd", str(project))
    assert code == 0
    assert "disabled in" in out and "skills.json" in out
    assert "shadows the global skill" in out


def test_doctor_explains_invalid_frontmatter_and_missing_bins(
    capsys, project, project_skills, monkeypatch
):
    monkeypatch.setenv("PATH", "")
    write_skill(project_skills, "broken", text="---\nname: x\n")
    write_skill(project_skills, "needs", extra="requires:\n  bins: [jq]")
    code, out, _ = run(capsys, "skill", "doctor", "broken", "--cwd", str(project))
    assert code == 1 and "failed to load" in out and "never closed" in out
    code, out, _ = run(capsys, "skill", "doctor", "--json", "--cwd", str(project))
    reports = {r["key"]: r for r in json.loads(out)}
    assert reports["needs"]["state"] == "not_ready"
    assert any("jq" in r for r in reports["needs"]["reasons"])


def test_refresh_reports_counts(capsys, project, project_skills):
    write_skill(project_skills, "a")
    code, out, _ = run(capsys, "skill", "refresh", "--cwd", str(project))
    assert code == 0 and out.startswith("1 skills loaded")


def test_python_dash_m_runs_the_cli(project, project_skills, tmp_path):
    write_skill(project_skills, "a")
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "lemon_skills", "skill", "list", "--json", "--cwd", str(project)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["key"] == "a"


def test_usage_error_exit_code(capsys):
    code, _, err = run(capsys, "skill", "status")
    assert code == 2 and "Missing argument" in err


def test_list_shows_invalid_skills_with_the_reason_and_no_forged_rows(
    capsys, project, project_skills
):
    write_skill(project_skills, "empty", text="")
    write_skill(project_skills, "nl\nfake-row  project  enabled")
    write_skill(project_skills, "good")
    code, out, _ = run(capsys, "skill", "list", "--cwd", str(project))
    rows = out.splitlines()[1:]
    assert [r.split()[:3] for r in rows if r.startswith("empty")] == [
        ["empty", "project", "invalid"]
    ]
    assert not any(r.startswith("fake-row") for r in rows)
    assert [r.split()[2] for r in rows if r.startswith("good")] == ["enabled"]


def test_read_only_commands_leave_nothing_in_the_agent_dir_but_the_cache(
    capsys, project, project_skills, agent_dir
):
    write_skill(project_skills, "demo", description="Demo skill for tests.")
    for argv in (["prompt", "demo skill"], ["skill", "list"], ["skill", "find", "demo"]):
        assert main([*argv, "--cwd", str(project)]) == 0
    made = [p.relative_to(agent_dir) for p in agent_dir.rglob("*") if p.is_file()]
    assert made and all(p.parts[0] == "cache" for p in made), made
    assert sorted(p.name for p in (project / ".lemon").iterdir()) == ["skill"]


def test_cli_consistency_errors(capsys, project, project_skills, tmp_path):
    write_skill(project_skills, "demo")
    code, out, err = run(capsys, "skill", "status", "nope", "--cwd", str(project))
    assert code == 1 and err.startswith("error: Skill not found: nope") and "not_ready" not in out
    code, _, err = run(capsys, "skill", "list", "--cwd", str(tmp_path / "nonexistent"))
    assert code == 2 and "does not exist" in err
    code, _, _ = run(capsys, "skill", "usage", "--stale-after-days", "-3", "--cwd", str(project))
    assert code == 2
    binary = tmp_path / "q.bin"
    binary.write_bytes(b"\x00\xff\xfe")
    code, _, err = run(capsys, "skill", "eval", "--queries", str(binary), "--cwd", str(project))
    assert code == 1 and err.splitlines()[0].startswith("error:") and "internal" not in err


def test_enable_disable_and_refresh_speak_json(project, project_skills, capsys):
    write_skill(project_skills, "demo", description="Demo skill for testing things")
    code, out, _ = run(
        capsys, "skill", "disable", "demo", "--project", "--json", "--cwd", str(project)
    )
    assert code == 0
    assert json.loads(out) == {
        "key": "demo",
        "enabled": False,
        "scope": "project",
        "changed": True,
        "disabled_list_changed": True,
        "server_switch": None,
        "still_disabled_in": [],
        "still_disabled_by": [],
    }
    code, out, _ = run(capsys, "skill", "enable", "demo", "--json", "--cwd", str(project))
    data = json.loads(out)
    assert code == 0 and data["scope"] == "global" and data["changed"] is False
    assert data["still_disabled_in"] == ["project"]  # the project scope still disables it
    code, out, _ = run(capsys, "skill", "refresh", "--json", "--cwd", str(project))
    assert code == 0 and json.loads(out) == {"skills": 1, "diagnostics": 0}


def test_strict_lint_of_the_examples_folder_checks_its_project_skills(capsys):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    code, out, _ = run(capsys, "skill", "lint", "--strict", "--json", str(examples))
    assert code == 0
    paths = {Path(r["path"]) for r in json.loads(out)}
    assert paths == set(examples.glob("project/.lemon/skill/*/SKILL.md"))
    assert len(paths) == 6


def test_enabling_a_skill_inside_a_disabled_namespace_says_what_keeps_it_off(capsys, project):
    from tests.helpers.hosts import claude_plugin

    claude_plugin(project, name="review")
    key = "review:conventional-commits"
    run(capsys, "skill", "disable", "review:*", "--cwd", str(project))
    code, _, err = run(capsys, "skill", "enable", key, "--cwd", str(project))
    assert code == 0
    assert (
        f"{key} is still disabled by its namespace review:* in the global scope; "
        "run `lemon skill enable 'review:*'`" in err
    )
    code, out, _ = run(capsys, "skill", "enable", key, "--json", "--cwd", str(project))
    assert json.loads(out)["still_disabled_by"] == [
        {"scope": "global", "key": "review:*", "command": "lemon skill enable 'review:*'"}
    ]


def test_a_namespace_toggle_says_it_also_switches_the_mcp_server_of_that_name(
    capsys, project, agent_dir, trusted_projects
):
    from tests.helpers.hosts import claude_plugin

    claude_plugin(project, name="review")
    code, out, _ = run(capsys, "skill", "disable", "review:*", "--cwd", str(project))
    assert code == 0
    assert out.splitlines() == [
        "review:*: disabled in global scope",
        "  every skill keyed review:*: disabled",
        "  skills of MCP server 'review': switched off; no server of that name is configured",
    ]
    code, out, _ = run(capsys, "skill", "enable", "review:*", "--json", "--cwd", str(project))
    data = json.loads(out)
    assert data["disabled_list_changed"] is True
    assert data["server_switch"] == {
        "server": "review",
        "on": True,
        "changed": True,
        "configured": False,
    }
    state = json.loads((agent_dir / "skills.json").read_text("utf-8"))
    assert state["skills"] == {"review:*": {"enabled": True}}
    mcp_json = project / ".lemon" / "mcp.json"
    mcp_json.parent.mkdir()
    mcp_json.write_text(json.dumps({"mcpServers": {"review": {"command": "review-mcp"}}}))
    code, out, _ = run(capsys, "skill", "disable", "review:*", "--cwd", str(project))
    assert out.splitlines()[-1] == "  skills of MCP server 'review': switched off"


def test_list_names_a_skill_whose_frontmatter_has_no_name(capsys, project, project_skills):
    write_skill(project_skills, "noname", text="---\ndescription: Does things.\n---\n\nBody.\n")
    code, out, err = run(capsys, "skill", "list", "--cwd", str(project))
    assert code == 0 and "noname" in out
    assert "warning: noname: no name in the frontmatter" in err
    code, out, _ = run(capsys, "skill", "list", "--json", "--diagnostics", "--cwd", str(project))
    codes = [d["code"] for d in json.loads(out)["diagnostics"]]
    assert "no_name" in codes
