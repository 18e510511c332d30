from __future__ import annotations

from pathlib import Path

import pytest

from lemon_skills.skills.format.manifest import Manifest
from lemon_skills.skills.format.model import Entry, SkillBundle
from lemon_skills.skills.selection import activation as act

ROOT = Path("/repo")


def _hit(pattern: str, rel: str) -> bool:
    return act.matches([pattern], [ROOT / rel], [ROOT])


@pytest.mark.parametrize(
    ("pattern", "rel", "hit"),
    [
        ("*.py", "src/deep/app.py", True),  # a bare name matches at any depth
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/deep/app.py", False),  # * stays inside one directory
        ("src/**/*.py", "src/app.py", True),
        ("src/**/*.py", "src/a/b/app.py", True),
        ("docs", "docs/guide/intro.md", True),  # a directory covers what is under it
        ("docs/", "docs/intro.md", True),
        ("./src/*.ts", "src/a.ts", True),
        ("*.{ts,tsx}", "ui/App.tsx", True),
        ("*.{ts,tsx}", "ui/App.jsx", False),
        ("{src,lib/{a,b}}/*.go", "lib/b/x.go", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[abc].md", "b.md", True),
        ("[!abc].md", "b.md", False),
        ("[!abc].md", "d.md", True),
        ("a[!x]b", "a/b", False),  # a bracket never matches the separator
        ("Makefile", "sub/Makefile", True),
        ("src/app.py", "other/src/app.py", False),  # a slash anchors at the root
    ],
)
def test_globs_follow_gitignore_style_rules(pattern, rel, hit):
    assert _hit(pattern, rel) is hit


def test_no_files_or_no_patterns_never_match():
    assert not act.matches([], [ROOT / "a.py"], [ROOT])
    assert not act.matches(["*.py"], [], [ROOT])
    assert not act.matches(["   "], [ROOT / "a.py"], [ROOT])


def test_files_outside_every_root_do_not_match():
    assert not act.matches(["*.py"], [Path("/elsewhere/a.py")], [ROOT])


def test_files_in_play_are_taken_from_cwd_and_matched_from_the_git_root_too(project):
    sub = project / "pkg"
    sub.mkdir()
    play = act.in_play(["mod.py"], cwd=sub)
    assert play.files == (sub / "mod.py",)
    assert play.roots == (sub, project)
    assert act.in_play(None, cwd=sub).files == ()


def _entry(**manifest):
    return Entry(
        key="k",
        name="k",
        description="d",
        source="global",
        path="/s/k",
        manifest=Manifest(**manifest),
        body="",
    )


def test_activation_modes_in_order_of_precedence():
    assert act.activation(_entry(always_apply=True, paths=("*.py",))) == "always"
    assert act.activation(_entry(disable_model_invocation=True)) == "manual"
    assert act.activation(_entry(paths=("*.py",), attach=True)) == "files"
    assert act.activation(_entry(paths=("*.py",))) == "paths"
    assert act.activation(_entry()) == "request"
    assert act.describe(_entry(paths=("*.py", "*.pyi"))) == (
        "offered for relevant requests when a file in play matches *.py, *.pyi"
    )


def test_a_path_scoped_skill_is_admitted_only_when_a_file_matches():
    play = act.InPlay(files=(ROOT / "src" / "a.py",), roots=(ROOT,))
    assert play.admits(_entry())
    assert play.admits(_entry(paths=("*.py",)))
    assert not play.admits(_entry(paths=("*.rs",)))


def test_a_bundled_skills_globs_are_also_relative_to_its_bundle():
    bundle = SkillBundle(kind="cursor-rules", name="r", root="/repo/packages/web")
    entry = Entry(
        key="k",
        name="k",
        description="d",
        source="project",
        path="/s/k",
        bundle=bundle,
        manifest=Manifest(paths=("src/*.tsx",)),
        body="",
    )
    play = act.InPlay(files=(ROOT / "packages" / "web" / "src" / "App.tsx",), roots=(ROOT,))
    assert play.matches(entry)
