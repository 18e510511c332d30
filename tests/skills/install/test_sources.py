from __future__ import annotations

import os
from pathlib import Path

import pytest

from lemon_skills.errors import SourceError
from lemon_skills.skills.install.sources import SOURCES, resolve
from tests.helpers.git import skill_md

#: The loopback git servers (git_http, git_daemon, github).
pytest_plugins = ("tests.helpers.git_fixtures",)


def test_resolve_tells_local_git_and_github_sources_apart(tmp_path):
    (tmp_path / "dir").mkdir()
    assert resolve("./dir", cwd=tmp_path).kind == "local"
    assert resolve(str(tmp_path / "dir")).location == str(tmp_path / "dir")
    for url in (
        "https://example.com/a/skill.git",
        "http://example.com/a/skill",
        "ssh://git@example.com/a/skill.git",
        "git://example.com/skill.git",
        "file:///srv/skill.git",
        "git@example.com:a/skill.git",
    ):
        spec = resolve(url)
        assert (spec.kind, spec.location) == ("git", url)
    assert resolve("git+https://example.com/x.git").location == "https://example.com/x.git"
    gh = resolve("gh:acme/skills")
    assert (gh.kind, gh.location, gh.default_name) == ("github", "acme/skills", "skills")
    assert resolve("https://example.com/skills.git").default_name == "skills"


def test_home_relative_local_source_uses_the_configured_home(home):
    (home / "my-skill").mkdir()
    assert resolve("~/my-skill").location == str(home / "my-skill")


def test_fragment_and_path_select_a_subdirectory():
    assert resolve("gh:acme/skills#skills/pdf").subdir == "skills/pdf"
    assert resolve("https://example.com/x.git", path="skills/pdf/").subdir == "skills/pdf"
    with pytest.raises(SourceError, match="already names"):
        resolve("gh:acme/skills#a", path="b")


@pytest.mark.parametrize("subdir", ["../outside", "a/../../b", "/etc"])
def test_a_subdirectory_leaving_the_source_is_refused(subdir):
    with pytest.raises(SourceError, match="inside the source"):
        resolve("https://example.com/x.git", path=subdir)


def test_a_source_starting_with_a_dash_is_refused():
    with pytest.raises(SourceError, match="starts with '-'") as err:
        resolve("--upload-pack=touch /tmp/x")
    assert err.value.hint and "./" in err.value.hint


@pytest.mark.parametrize("ref", ["--upload-pack=x", "-b", "a..b", "x y", "main.lock"])
def test_unsafe_refs_are_refused(ref):
    with pytest.raises(SourceError, match="invalid git ref"):
        resolve("https://example.com/x.git", ref=ref)


def test_command_running_git_transports_are_refused(tmp_path):
    marker = tmp_path / "pwned"
    for source in (f"git+ext::sh -c touch% {marker}", f"ext::sh -c touch% {marker}", "fd::3"):
        with pytest.raises(SourceError):
            resolve(source, cwd=tmp_path)
    assert not marker.exists()


def test_malformed_github_shorthand_and_missing_paths_are_explained(tmp_path):
    with pytest.raises(SourceError, match="gh:OWNER/REPO"):
        resolve("gh:only-owner")
    with pytest.raises(SourceError, match="does not exist"):
        resolve("./nope", cwd=tmp_path)


def test_local_source_copies_without_following_symlinks(tmp_path):
    src = tmp_path / "skill"
    src.mkdir()
    (src / "SKILL.md").write_text(skill_md("skill"))
    os.symlink("/etc/passwd", src / "passwd")
    (src / ".git").mkdir()
    (src / ".git" / "config").write_text("x")
    fetched = SOURCES["local"].fetch(resolve(str(src)), tmp_path / "out", progress=None)
    assert (fetched.root / "passwd").is_symlink()
    assert not (fetched.root / ".git").exists()


def test_local_source_refuses_special_files(tmp_path):
    src = tmp_path / "skill"
    src.mkdir()
    (src / "SKILL.md").write_text(skill_md("skill"))
    os.mkfifo(src / "pipe")
    with pytest.raises(SourceError, match="not a regular file"):
        SOURCES["local"].fetch(resolve(str(src)), tmp_path / "out", progress=None)


def test_local_latest_is_the_bundle_hash_and_changes_with_content(tmp_path):
    src = tmp_path / "skill"
    src.mkdir()
    (src / "SKILL.md").write_text(skill_md("skill"))
    spec = resolve(str(src))
    before = SOURCES["local"].latest(spec)
    assert SOURCES["local"].latest(spec) == before
    (src / "SKILL.md").write_text(skill_md("skill", body="changed\n"))
    assert SOURCES["local"].latest(spec) != before


def test_local_source_subdir_may_not_escape_through_a_symlink(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, src / "link")
    with pytest.raises(SourceError, match="symlink"):
        SOURCES["local"].fetch(resolve(str(src), path="link"), tmp_path / "out", progress=None)


def test_proc_run_reports_failures_as_command_errors(tmp_path):
    from lemon_skills import _proc
    from lemon_skills.errors import CommandError

    assert _proc.run(["sh", "-c", "echo hi"]).stdout == "hi\n"
    with pytest.raises(CommandError) as err:
        _proc.run(["sh", "-c", "echo oops >&2; exit 3"])
    assert err.value.returncode == 3 and "oops" in str(err.value)
    with pytest.raises(CommandError, match="cannot run"):
        _proc.run([str(tmp_path / "missing-binary")])
    with pytest.raises(CommandError, match="timed out"):
        _proc.run(["sh", "-c", "sleep 30"], timeout=0.2)


def test_sources_path_helper_is_not_confused_by_hash_in_local_paths(tmp_path):
    d = tmp_path / "a#b"
    d.mkdir()
    spec = resolve(str(d))
    assert (spec.kind, spec.subdir, Path(spec.location).name) == ("local", "", "a#b")


def test_github_web_urls_of_a_folder_or_skill_file_are_understood():
    spec = resolve("https://github.com/acme/skills/tree/main/skills/pdf")
    assert (spec.kind, spec.location, spec.ref, spec.subdir) == (
        "git",
        "https://github.com/acme/skills.git",
        "main",
        "skills/pdf",
    )
    blob = resolve("https://github.com/acme/skills/blob/v1.2/skills/pdf/SKILL.md")
    assert (blob.ref, blob.subdir) == ("v1.2", "skills/pdf")
    with pytest.raises(SourceError, match="already names a ref"):
        resolve("https://github.com/acme/skills/tree/main/x", ref="dev")
    with pytest.raises(SourceError, match="inside the source"):
        resolve("https://github.com/acme/skills/tree/main/../../etc")
