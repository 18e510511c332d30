from __future__ import annotations

import os

from lemon_skills.skills.catalog import registry
from lemon_skills.skills.ranking import snapshot
from tests.helpers.skills import write_skill


def _entries(project, project_skills, n):
    for i in range(n):
        write_skill(project_skills, f"skill-{i}", description=f"Skill number {i} about topic {i}.")
    return registry.view(project).enabled()


def test_small_skill_sets_are_built_in_memory_and_never_cached(project, project_skills):
    entries = _entries(project, project_skills, 3)
    index = snapshot.load_or_build(entries)
    assert [e.key for e in index.entries] == [e.key for e in entries]
    assert not snapshot.cache_dir().exists()


def test_the_environment_switch_turns_the_cache_off(project, project_skills, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_SKILLS", 0)
    monkeypatch.setenv("LEMON_NO_INDEX_CACHE", "1")
    snapshot.load_or_build(_entries(project, project_skills, 3))
    assert not snapshot.cache_dir().exists()


def test_an_unwritable_cache_falls_back_to_building(project, project_skills, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_SKILLS", 0)
    entries = _entries(project, project_skills, 3)
    blocker = snapshot.cache_dir()
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("a file where the cache directory should be", "utf-8")
    assert len(snapshot.load_or_build(entries).entries) == 3


def test_only_the_most_recent_indexes_are_kept(project, project_skills, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_SKILLS", 0)
    entries = _entries(project, project_skills, 2)
    folder = snapshot.cache_dir()
    folder.mkdir(parents=True)
    for i in range(snapshot.KEEP + 2):
        old = folder / f"old-{i}.idx"
        old.write_bytes(b"x")
        os.utime(old, (i, i))
    snapshot.load_or_build(entries)
    kept = sorted(p.name for p in folder.glob("*.idx"))
    assert len(kept) == snapshot.KEEP
    assert "old-0.idx" not in kept and "old-1.idx" not in kept and "old-2.idx" not in kept


def test_a_large_tree_gets_one_focused_answer_per_process(project, project_skills, monkeypatch):
    monkeypatch.setattr(snapshot, "FOCUS_MIN", 3)
    entries = _entries(project, project_skills, 4)
    first = snapshot.first_query_index(entries, "topic 2")
    assert first is not None and first.core.store is None  # focused: never stored
    # The next query (a refreshed registry included) builds the full index.
    assert snapshot.first_query_index(registry.view(project, refresh=True).enabled(), "x") is None


def test_a_tree_with_an_index_on_disk_is_never_focused(project, project_skills, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_SKILLS", 0)
    monkeypatch.setattr(snapshot, "FOCUS_MIN", 3)
    entries = _entries(project, project_skills, 4)
    snapshot.load_or_build(entries)
    snapshot._LAST.clear()  # as in a new process
    assert snapshot.first_query_index(entries, "topic 2") is None
