from __future__ import annotations

import os
from pathlib import Path

import lemon_skills
from tests.helpers.skills import write_skill


def keys(cwd: Path) -> list[str]:
    return [e.key for e in lemon_skills.list(cwd=cwd)]


def test_project_and_global_skills_are_listed_with_their_source(
    project, project_skills, global_skills
):
    write_skill(project_skills, "local-one")
    write_skill(global_skills, "global-one")
    entries = {e.key: e for e in lemon_skills.list(cwd=project)}
    assert entries["local-one"].source == "project"
    assert entries["global-one"].source == "global"
    assert entries["local-one"].path == project_skills / "local-one"
    assert entries["global-one"].enabled is True


def test_project_skill_overrides_global_and_shadowing_is_reported(
    project, project_skills, global_skills
):
    write_skill(project_skills, "same", description="project version")
    write_skill(global_skills, "same", description="global version")
    entry = lemon_skills.get("same", cwd=project)
    assert entry is not None and entry.description == "project version"
    shadowed = [d for d in lemon_skills.diagnostics(cwd=project) if d.code == "shadowed"]
    assert len(shadowed) == 1
    assert shadowed[0].path == global_skills / "same"
    assert str(project_skills / "same") in shadowed[0].reason


def test_lemon_agent_dir_is_honoured(tmp_path, monkeypatch, project):
    other = tmp_path / "elsewhere"
    write_skill(other / "skill", "from-env")
    monkeypatch.setenv("LEMON_AGENT_DIR", str(other))
    assert "from-env" in keys(project)


def test_harness_dirs_in_home_and_up_to_git_root(project, home):
    write_skill(home / ".agents" / "skills", "harness-global")
    sub = project / "pkg" / "app"
    sub.mkdir(parents=True)
    write_skill(project / ".agents" / "skills", "repo-root")
    write_skill(project / "pkg" / ".agents" / "skills", "mid")
    write_skill(project.parent / ".agents" / "skills", "above-git-root")
    entries = {e.key: e for e in lemon_skills.list(cwd=sub)}
    assert entries["repo-root"].source == "project"
    assert entries["mid"].source == "project"
    assert entries["harness-global"].source == "global"
    assert "above-git-root" not in entries


def test_nearer_agents_dir_wins_over_ancestor(project):
    sub = project / "pkg"
    write_skill(project / ".agents" / "skills", "dup", description="root")
    write_skill(sub / ".agents" / "skills", "dup", description="near")
    assert lemon_skills.get("dup", cwd=sub).description == "near"


def test_lemon_skill_dir_beats_agents_dir(project, project_skills):
    write_skill(project / ".agents" / "skills", "dup", description="agents")
    write_skill(project_skills, "dup", description="lemon")
    assert lemon_skills.get("dup", cwd=project).description == "lemon"


def test_symlinked_skill_dirs_are_followed_and_deduplicated(project, project_skills, tmp_path):
    real = write_skill(tmp_path / "store", "linked", description="via symlink")
    os.symlink(real, project_skills / "linked")
    agents = project / ".agents" / "skills"
    agents.mkdir(parents=True)
    os.symlink(real, agents / "linked")
    os.symlink(real, agents / "alias")
    entries = lemon_skills.list(cwd=project)
    assert [e.key for e in entries] == ["linked"]
    diags = lemon_skills.diagnostics(cwd=project)
    assert not [d for d in diags if d.code == "shadowed"]
    assert [d.key for d in diags if d.code == "duplicate"] == ["alias"]


def test_hidden_and_staging_dirs_are_skipped(project, project_skills):
    write_skill(project_skills, ".hidden")
    write_skill(project_skills, ".pdf.staging-123")
    write_skill(project_skills, "pdf.backup-9")
    write_skill(project_skills, "visible")
    assert keys(project) == ["visible"]


def test_one_bad_file_never_hides_another(project, project_skills):
    write_skill(project_skills, "good")
    write_skill(project_skills, "unclosed", text="---\nname: unclosed\n")
    write_skill(project_skills, "broken-yaml", text="---\nname: [oops\n---\nbody")
    write_skill(
        project_skills,
        "list-item-map",
        text="---\nname: x\ndescription: d\nreferences:\n  - path: a.md\n"
        "    description: d\n---\nbody",
    )
    (project_skills / "binary").mkdir()
    (project_skills / "binary" / "SKILL.md").write_bytes(b"\xff\xfe\x00garbage")
    assert keys(project) == ["good", "list-item-map"]
    codes = {d.key: d.code for d in lemon_skills.diagnostics(cwd=project) if d.level == "error"}
    assert codes == {
        "unclosed": "invalid_frontmatter",
        "broken-yaml": "invalid_frontmatter",
        "binary": "encoding",
    }


def test_thousand_malformed_files_next_to_one_good_skill(project, project_skills):
    write_skill(project_skills, "the-good-one")
    broken = ["---\nname: x\n", "---\n: : :\n---\n", "---\n[unclosed\n---\nb", "---\n- list\n---\n"]
    for i in range(1000):
        write_skill(project_skills, f"bad-{i:04d}", text=broken[i % len(broken)])
    assert keys(project) == ["the-good-one"]
    bad = {d.key for d in lemon_skills.diagnostics(cwd=project) if d.level == "error"}
    assert bad == {f"bad-{i:04d}" for i in range(1000)}


def test_missing_description_loads_with_a_warning(project, project_skills):
    write_skill(project_skills, "nodesc", description=None)
    assert keys(project) == ["nodesc"]
    diag = [d for d in lemon_skills.diagnostics(cwd=project) if d.key == "nodesc"]
    assert [d.code for d in diag] == ["no_description"]


def test_name_defaults_to_key(project, project_skills):
    write_skill(project_skills, "keyed", text="---\ndescription: d\n---\nbody")
    assert lemon_skills.get("keyed", cwd=project).name == "keyed"


def test_misnamed_and_oversized_files_are_diagnosed(project, project_skills):
    (project_skills / "lower").mkdir()
    (project_skills / "lower" / "skill.md").write_text("---\ndescription: d\n---\n", "utf-8")
    write_skill(project_skills, "huge", body="x" * (1024 * 1024 + 10))
    codes = {d.key: d.code for d in lemon_skills.diagnostics(cwd=project)}
    assert codes["lower"] == "misnamed"
    assert codes["huge"] == "too_large"
    assert keys(project) == []


def test_broken_symlink_is_diagnosed(project, project_skills, tmp_path):
    os.symlink(tmp_path / "nowhere", project_skills / "dangling")
    diags = lemon_skills.diagnostics(cwd=project)
    assert [(d.key, d.code) for d in diags] == [("dangling", "broken_symlink")]


def test_outside_a_git_repo_only_cwd_agents_dir_is_project(tmp_path, home):
    loose = tmp_path / "loose" / "deeper"
    write_skill(tmp_path / "loose" / ".agents" / "skills", "parent-skill")
    write_skill(loose / ".agents" / "skills", "here")
    assert keys(loose) == ["here"]


def test_entry_to_dict_has_the_listing_fields(project, project_skills):
    write_skill(project_skills, "a", extra="tags: [x]")
    d = lemon_skills.get("a", cwd=project).to_dict()
    assert {"key", "name", "description", "source", "path", "enabled"} <= set(d)
    assert d["tags"] == ["x"]


def _codes(cwd: Path) -> dict[str | None, str]:
    return {d.key: d.code for d in lemon_skills.diagnostics(cwd=cwd)}


def test_a_skill_md_symlinked_outside_its_skill_is_refused_and_never_read(
    project, project_skills, tmp_path
):
    secret = tmp_path / "id_rsa"
    secret.write_text("---\nname: leak\ndescription: PRIVATE KEY\n---\nBEGIN PRIVATE KEY\n")
    (project_skills / "x").mkdir()
    (project_skills / "x" / "SKILL.md").symlink_to(secret)
    assert "x" not in keys(project)
    assert _codes(project)["x"] == "symlink-escape"
    assert all("PRIVATE" not in d.reason for d in lemon_skills.diagnostics(cwd=project))


def test_a_symlinked_skill_directory_and_an_inner_symlinked_skill_md_keep_working(
    project, project_skills, tmp_path
):
    real = write_skill(tmp_path / "elsewhere", "linked", description="via a dir link")
    (project_skills / "linked").symlink_to(real)
    inner = project_skills / "inner"
    (inner / "docs").mkdir(parents=True)
    (inner / "docs" / "skill.md").write_text("---\nname: inner\ndescription: d\n---\nBody\n")
    (inner / "SKILL.md").symlink_to("docs/skill.md")
    entries = {e.key: e for e in lemon_skills.list(cwd=project)}
    assert entries["linked"].description == "via a dir link"
    assert entries["inner"].body == "Body"


def test_skill_md_symlink_loops_are_reported(project, project_skills):
    (project_skills / "loop").mkdir()
    (project_skills / "loop" / "SKILL.md").symlink_to("SKILL.md")
    assert _codes(project)["loop"] == "symlink_loop"


def test_empty_and_frontmatter_less_skill_md_are_invalid_with_a_reason(project, project_skills):
    write_skill(project_skills, "empty", text="")
    write_skill(project_skills, "bare", text="Just a body.\n")
    write_skill(project_skills, "good")
    assert keys(project) == ["good"]
    codes = _codes(project)
    assert (codes["empty"], codes["bare"]) == ("empty", "no_frontmatter")


def test_control_characters_in_a_key_or_name_are_refused(project, project_skills):
    write_skill(project_skills, "nl\nfake-row  project  enabled")
    write_skill(project_skills, "rtl\u202eevil")
    write_skill(project_skills, "named", name='"a\\nb"')
    assert keys(project) == []
    diags = lemon_skills.diagnostics(cwd=project)
    assert sorted(d.code for d in diags) == ["unsafe_key", "unsafe_key", "unsafe_name"]
    assert all("\n" not in (d.key or "") for d in diags)


def test_a_path_like_name_gets_a_diagnostic_and_the_key_is_shown(project, project_skills):
    write_skill(project_skills, "x", name="../../etc/x")
    entry = lemon_skills.get("x", cwd=project)
    assert entry is not None and entry.name == "x"
    assert _codes(project)["x"] == "unsafe_name"


def test_a_cursor_rule_symlinked_outside_the_project_is_refused(project, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("---\ndescription: PRIVATE\nalwaysApply: true\n---\nKEY\n")
    rules = project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "x.mdc").symlink_to(secret)
    (project / ".cursorrules").symlink_to(secret)
    assert not [k for k in keys(project) if k.startswith("cursor:")]
    codes = _codes(project)
    assert codes["cursor:x.mdc"] == codes["cursor:cursorrules"] == "symlink-escape"
