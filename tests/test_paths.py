"""Paths are resolved at call time, and the project search walk stops where it should."""

from __future__ import annotations

from pathlib import Path

from lemon_skills import paths


def test_locations_follow_the_environment_at_call_time(monkeypatch, tmp_path):
    monkeypatch.setenv("LEMON_AGENT_DIR", str(tmp_path / "a"))
    assert paths.agent_dir() == tmp_path / "a"
    monkeypatch.setenv("LEMON_AGENT_DIR", str(tmp_path / "b"))
    assert paths.agent_dir() == tmp_path / "b"
    monkeypatch.delenv("LEMON_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert paths.agent_dir() == tmp_path / "home" / ".lemon" / "agent"
    assert paths.global_skill_dirs() == [
        tmp_path / "home" / ".lemon" / "agent" / "skill",
        tmp_path / "home" / ".agents" / "skills",
    ]


def test_project_search_walks_up_to_the_git_root_and_no_further(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    assert paths.project_skill_dirs(sub) == [
        sub / ".lemon" / "skill",
        sub / ".agents" / "skills",
        repo / "a" / ".agents" / "skills",
        repo / ".agents" / "skills",
    ]


def test_outside_a_repository_only_the_directory_itself_is_searched(tmp_path):
    # Walking up from a plain directory would reach ~/.agents/skills, a global dir.
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert paths.project_skill_dirs(plain) == [
        plain / ".lemon" / "skill",
        plain / ".agents" / "skills",
    ]


def test_scope_roots_and_explicit_scope(tmp_path, agent_dir):
    assert paths.scope_root("global") == agent_dir
    assert paths.scope_skill_dir("project", tmp_path) == tmp_path / ".lemon" / "skill"
    assert paths.explicit_scope(None, None) is None
    assert paths.explicit_scope(True, None) == "global"
    assert paths.explicit_scope(False, None) == "project"
    assert paths.explicit_scope(True, "project") == "project"


def test_install_transients_and_hidden_entries_are_never_skills():
    for name in (".git", ".staging-abc", "demo.backup-1", "x.lemon-tmp-9"):
        assert paths.is_transient_name(name), name
    for name in ("demo", "my.skill", "v1.2"):
        assert not paths.is_transient_name(name), name


def test_relative_cwd_is_made_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert paths.resolve_cwd("sub") == tmp_path / "sub"
    assert paths.resolve_cwd(None) == Path.cwd()
