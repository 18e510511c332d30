from __future__ import annotations

import datetime
import os

from lemon_skills.skills import cache
from lemon_skills.skills.registry import Registry
from tests.helpers.skills import write_skill


def test_second_registry_reuses_cached_manifests(project, project_skills, monkeypatch):
    write_skill(
        project_skills,
        "a",
        description="Alpha",
        extra="tags: [x, y]\ncreated: 2024-05-01",
        body="Body text\n",
    )
    first = Registry().view(project).by_key["a"]
    assert cache.cache_path(project_skills).is_file()

    def no_parse(*args, **kwargs):
        raise AssertionError("a cached skill must not be parsed again")

    monkeypatch.setattr("lemon_skills.skills.registry.load_candidate", no_parse)
    again = Registry().view(project).by_key["a"]
    assert again.manifest.tags == first.manifest.tags == ("x", "y")
    assert again.description == "Alpha"
    assert again.body == "Body text"
    assert again.manifest.raw["created"] == datetime.date(2024, 5, 1)


def test_edited_file_is_reparsed_despite_cache(project, project_skills):
    d = write_skill(project_skills, "a", description="old")
    Registry().view(project)
    write_skill(project_skills, "a", description="new text")
    st = os.stat(d / "SKILL.md")
    os.utime(d / "SKILL.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))
    assert Registry().view(project).by_key["a"].description == "new text"


def test_failed_files_are_cached_with_their_diagnostics(project, project_skills, monkeypatch):
    write_skill(project_skills, "bad", text="---\nname: x\n")
    Registry().view(project)
    monkeypatch.setattr(
        "lemon_skills.skills.registry.load_candidate",
        lambda *a: (_ for _ in ()).throw(AssertionError("reparsed")),
    )
    diags = Registry().view(project).diagnostics
    assert [(d.key, d.code) for d in diags] == [("bad", "invalid_frontmatter")]


def test_corrupt_cache_is_ignored_and_rewritten(project, project_skills):
    write_skill(project_skills, "a", description="fine")
    Registry().view(project)
    path = cache.cache_path(project_skills)
    path.write_text("{not json", "utf-8")
    assert Registry().view(project).by_key["a"].description == "fine"
    assert cache.load(project_skills)["a"]


def test_cache_can_be_turned_off(project, project_skills, monkeypatch):
    monkeypatch.setenv("LEMON_SKILLS_CACHE", "0")
    write_skill(project_skills, "a")
    Registry().view(project)
    assert not cache.cache_path(project_skills).exists()


def test_cache_lives_under_the_agent_dir(project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    Registry().view(project)
    assert cache.cache_path(project_skills).is_relative_to(agent_dir)
    assert sorted(p.name for p in project_skills.iterdir()) == ["a"]


def test_listing_from_the_cache_matches_a_fresh_parse(project, project_skills):
    write_skill(
        project_skills,
        "a",
        description="Alpha",
        extra="version: 2.1\ntags: [x, y]\nkeywords: k1, k2\ncategory: ops\n"
        "platforms: [linux, macos]",
    )
    fresh = Registry().view(project).by_key["a"]
    cached = Registry().view(project).by_key["a"]
    assert cached.to_dict() == fresh.to_dict()
    assert cached.to_dict()["platforms"] == ["linux", "darwin"]
    assert cached.manifest == fresh.manifest
