from __future__ import annotations

import os

import pytest

from lemon_skills.errors import SourceError
from lemon_skills.skills.format.bundle import hash_dir
from lemon_skills.skills.install.sources.base import SourceSpec
from lemon_skills.skills.install.sources.local import LocalSource


def _spec(location, subdir=""):
    return SourceSpec(raw=str(location), kind="local", location=str(location), subdir=subdir)


def _source(tmp_path):
    src = tmp_path / "src"
    (src / "skills" / "pdf").mkdir(parents=True)
    (src / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\nx\n", "utf-8")
    (src / ".git").mkdir()
    (src / ".git" / "config").write_text("[core]", "utf-8")
    return src


def test_fetch_copies_the_subdirectory_and_keeps_symlinks_as_links(tmp_path):
    src = _source(tmp_path)
    os.symlink("/etc/passwd", src / "skills" / "pdf" / "link")
    fetched = LocalSource().fetch(_spec(src, "skills/pdf"), tmp_path / "dest", progress=None)
    assert (fetched.root / "SKILL.md").is_file()
    assert os.readlink(fetched.root / "link") == "/etc/passwd"


def test_git_metadata_is_not_copied(tmp_path):
    fetched = LocalSource().fetch(_spec(_source(tmp_path)), tmp_path / "dest", progress=None)
    assert not (fetched.root / ".git").exists()


def test_latest_is_the_bundle_hash_and_moves_with_edits(tmp_path):
    src = _source(tmp_path)
    spec = _spec(src, "skills/pdf")
    before = LocalSource().latest(spec)
    assert before == hash_dir(src / "skills" / "pdf")
    (src / "skills" / "pdf" / "SKILL.md").write_text("changed", "utf-8")
    assert LocalSource().latest(spec) != before


def test_missing_directory_and_symlinked_escape_are_refused(tmp_path):
    src = _source(tmp_path)
    with pytest.raises(SourceError, match="is not a directory"):
        LocalSource().latest(_spec(src, "nope"))
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, src / "escape")
    with pytest.raises(SourceError, match="leads outside"):
        LocalSource().fetch(_spec(src, "escape"), tmp_path / "dest", progress=None)


def test_a_fifo_is_refused_before_anything_is_copied(tmp_path):
    src = _source(tmp_path)
    os.mkfifo(src / "skills" / "pdf" / "pipe")
    with pytest.raises(SourceError, match="not a regular file"):
        LocalSource().fetch(_spec(src, "skills/pdf"), tmp_path / "dest", progress=None)
    assert not (tmp_path / "dest").exists()
