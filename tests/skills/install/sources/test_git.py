"""Git and GitHub sources: a locked-down git, refs, progress, timeouts, real loopback servers."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from lemon_skills.errors import SourceError
from lemon_skills.skills.install.sources import SOURCES, resolve
from lemon_skills.skills.install.sources.git import git_env
from tests.helpers.git import make_repo, skill_md

#: The loopback git servers (git_daemon, github).
pytest_plugins = ("tests.helpers.git_fixtures",)


def test_git_environment_is_scrubbed_and_locked_down():
    env = git_env({"PATH": "/bin", "GIT_DIR": "/evil", "GIT_SSH_COMMAND": "evil", "HOME": "/h"})
    assert "GIT_DIR" not in env
    assert env["GIT_ALLOW_PROTOCOL"] == "file:git:http:https:ssh"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert env["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"


def test_git_fetch_checks_out_head_and_reports_the_commit(tmp_path):
    repo = make_repo(tmp_path / "repo", {"SKILL.md": skill_md("alpha")})
    spec = resolve(repo.url)
    fetched = SOURCES["git"].fetch(spec, tmp_path / "out", progress=None)
    assert fetched.commit == repo.head()
    assert (fetched.root / "SKILL.md").read_text().startswith("---\nname: alpha")
    assert not (tmp_path / "out" / ".git").exists()
    assert SOURCES["git"].latest(spec) == repo.head()


def test_git_fetch_honours_branch_tag_and_commit_refs(tmp_path):
    repo = make_repo(tmp_path / "repo", {"SKILL.md": skill_md("v1")})
    first = repo.head()
    repo.tag("v1.0")
    repo.commit({"SKILL.md": skill_md("v2")})
    git = SOURCES["git"]
    for n, (ref, expected) in enumerate([("v1.0", first), ("main", repo.head()), (first, first)]):
        fetched = git.fetch(resolve(repo.url, ref=ref), tmp_path / f"out{n}", progress=None)
        assert fetched.commit == expected
    assert git.latest(resolve(repo.url, ref="v1.0")) == first
    assert git.latest(resolve(repo.url, ref=first[:10])) is None  # pinned: cannot move


def test_git_fetch_streams_progress_lines(tmp_path):
    repo = make_repo(tmp_path / "repo", {"SKILL.md": skill_md("alpha")})
    lines: list[str] = []
    SOURCES["git"].fetch(resolve(repo.url), tmp_path / "out", progress=lines.append)
    assert any("objects" in line for line in lines)


def test_git_fetch_of_a_missing_ref_or_subdir_is_a_source_error(tmp_path):
    repo = make_repo(tmp_path / "repo", {"SKILL.md": skill_md("alpha")})
    with pytest.raises(SourceError, match="cannot fetch"):
        SOURCES["git"].fetch(resolve(repo.url, ref="nope"), tmp_path / "a", progress=None)
    with pytest.raises(SourceError, match="no directory 'missing'"):
        SOURCES["git"].fetch(resolve(repo.url, path="missing"), tmp_path / "b", progress=None)


def test_git_ignores_user_config_hooks_and_templates(tmp_path, home):
    marker = tmp_path / "hook-ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (home / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n[init]\n\ttemplateDir = /x\n")
    repo = make_repo(tmp_path / "repo", {"SKILL.md": skill_md("alpha")})
    SOURCES["git"].fetch(resolve(repo.url), tmp_path / "out", progress=None)
    assert not marker.exists()


def test_git_daemon_source(tmp_path, git_daemon):
    repo = make_repo(
        tmp_path / "repo",
        {"SKILL.md": skill_md("alpha")},
        serve_as="acme/alpha",
        served_root=git_daemon.root,
    )
    spec = resolve(git_daemon.base + "acme/alpha.git")
    fetched = SOURCES["git"].fetch(spec, tmp_path / "out", progress=None)
    assert fetched.commit == repo.head()
    assert SOURCES["git"].latest(spec) == repo.head()


def test_github_shorthand_clones_from_the_configured_base(tmp_path, github):
    repo = make_repo(
        tmp_path / "repo",
        {"SKILL.md": skill_md("alpha")},
        serve_as="acme/alpha",
        served_root=github.root,
    )
    spec = resolve("gh:acme/alpha")
    fetched = SOURCES["github"].fetch(spec, tmp_path / "out", progress=None)
    assert fetched.commit == repo.head()
    assert SOURCES["github"].latest(spec) == repo.head()


def test_a_git_server_that_never_answers_times_out(tmp_path, monkeypatch):
    monkeypatch.setenv("LEMON_GIT_TIMEOUT", "1")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        accepted: list[socket.socket] = []
        t = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
        t.start()
        url = f"git://127.0.0.1:{listener.getsockname()[1]}/x.git"
        with pytest.raises(SourceError, match="timed out"):
            SOURCES["git"].fetch(resolve(url), tmp_path / "out", progress=None)
        for conn in accepted:
            conn.close()
