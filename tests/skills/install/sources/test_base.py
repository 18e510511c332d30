from __future__ import annotations

import pytest

from lemon_skills.errors import SourceError
from lemon_skills.skills.install.sources.base import SourceSpec, check_ref, check_subdir


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("skills/pdf", "skills/pdf"), ("./skills//pdf/", "skills/pdf"), ("a\\b", "a/b"), ("", "")],
)
def test_subdirectories_are_normalised(raw, clean):
    assert check_subdir(raw) == clean


@pytest.mark.parametrize("raw", ["/etc", "\\share", "skills/../../x", ".."])
def test_subdirectories_leaving_the_source_are_refused(raw):
    with pytest.raises(SourceError, match="relative path inside the source"):
        check_subdir(raw)


@pytest.mark.parametrize("ref", [None, "main", "v1.2.0", "feature/x", "0123abcd"])
def test_plain_refs_are_accepted(ref):
    check_ref(ref)


@pytest.mark.parametrize("ref", ["--upload-pack=evil", "-b", "a..b", "x.lock", "dir/", "", "a b"])
def test_refs_git_could_misread_are_refused(ref):
    with pytest.raises(SourceError, match="invalid git ref"):
        check_ref(ref)


@pytest.mark.parametrize(
    ("location", "subdir", "name"),
    [
        ("https://github.com/acme/pdf-tools.git", "", "pdf-tools"),
        ("git@github.com:acme/tools.git/", "", "tools"),
        ("/home/me/skills/", "", "skills"),
        ("https://x/acme/repo", "skills/csv", "csv"),
    ],
)
def test_a_root_skill_is_named_after_the_repository_or_subdirectory(location, subdir, name):
    spec = SourceSpec(raw=location, kind="git", location=location, subdir=subdir)
    assert spec.default_name == name


def test_with_subdir_keeps_everything_else():
    spec = SourceSpec(raw="r", kind="github", location="https://x/r", ref="v1")
    narrowed = spec.with_subdir("skills/a")
    assert (narrowed.raw, narrowed.kind, narrowed.location, narrowed.ref) == (
        "r",
        "github",
        "https://x/r",
        "v1",
    )
    assert narrowed.subdir == "skills/a"
