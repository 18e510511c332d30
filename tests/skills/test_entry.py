from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from lemon_skills.skills.catalog.registry import Registry
from lemon_skills.skills.format.manifest import Manifest
from lemon_skills.skills.format.model import Entry
from tests.helpers.skills import write_skill


def test_entry_path_is_a_path_whether_given_as_text_or_path(tmp_path):
    a = Entry(key="k", name="k", description="", source="global", path=str(tmp_path / "k"))
    b = Entry(key="k", name="k", description="", source="global", path=tmp_path / "k")
    assert a.path == b.path == tmp_path / "k"
    assert isinstance(a.path, Path)
    assert a.skill_file == tmp_path / "k" / "SKILL.md"
    assert a == b and hash(a) == hash(b)
    assert a.to_dict()["path"] == str(tmp_path / "k")


def test_entry_built_in_memory_keeps_its_manifest_and_body(tmp_path):
    m = Manifest(name="n", description="d", tags=("t",))
    e = Entry(
        key="k", name="n", description="d", source="project", path=tmp_path, manifest=m, body="B"
    )
    assert e.manifest is m and e.body == "B"
    assert e.to_dict()["tags"] == ["t"]
    assert e.compact_manifest() == {"tags": ["t"], "format": "none"}


def test_with_enabled_changes_only_the_flag(project, project_skills):
    write_skill(project_skills, "a", description="Alpha", body="Body\n")
    e = Registry().view(project).by_key["a"]
    off = e.with_enabled(False)
    assert (off.enabled, e.enabled) == (False, True)
    assert off.to_dict() == {**e.to_dict(), "enabled": False}
    assert (off.key, off.path, off.body, off.manifest) == (e.key, e.path, e.body, e.manifest)
    assert off != e


def test_disabled_skill_is_listed_disabled_from_the_cache(project, project_skills, agent_dir):
    write_skill(project_skills, "a")
    write_skill(project_skills, "b")
    Registry().view(project)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills.json").write_text('{"version": 1, "disabled": ["b"], "skills": {}}')
    v = Registry().view(project)
    assert [(e.key, e.enabled) for e in v.entries] == [("a", True), ("b", False)]
    assert [e.key for e in v.enabled()] == ["a"]


def test_facade_names_resolve_on_first_use():
    # `status` is a facade function of lemon_skills.skills however the package is reached; the
    # module behind it has its own name, so importing it cannot shadow the function.
    code = (
        "import lemon_skills.skills.api, lemon_skills.skills.catalog.readiness as s;"
        "import lemon_skills.skills as p, lemon_skills, types;"
        "print(callable(p.status), isinstance(p.status, types.ModuleType),"
        " isinstance(s, types.ModuleType), lemon_skills.list is p.list_skills)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "True", "True"]


def test_entries_from_the_cache_are_frozen_entries(project, project_skills):
    write_skill(project_skills, "a", description="Alpha")
    fresh = Registry().view(project).by_key["a"]
    cached = Registry().view(project).by_key["a"]
    assert type(cached) is Entry
    assert cached == fresh and hash(cached) == hash(fresh)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cached.description = "changed"  # type: ignore[misc]
    assert cached.description == "Alpha"
