from __future__ import annotations

import os

from lemon_skills.context import current
from lemon_skills.skills.catalog.registry import Registry
from lemon_skills.skills.remote import Sources
from lemon_skills.skills.remote.model import Listing, RemoteFile, RemoteSkill
from tests.helpers.skills import write_skill


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_view_is_cached_while_nothing_changes(project, project_skills):
    write_skill(project_skills, "a")
    reg = Registry()
    assert reg.view(project) is reg.view(project)


def test_new_skill_is_seen_without_refresh(project, project_skills):
    reg = Registry(clock=Clock())
    write_skill(project_skills, "a")
    assert [e.key for e in reg.view(project).entries] == ["a"]
    write_skill(project_skills, "b")
    assert [e.key for e in reg.view(project).entries] == ["a", "b"]


def test_removed_skill_disappears_without_refresh(project, project_skills):
    reg = Registry(clock=Clock())
    write_skill(project_skills, "a")
    write_skill(project_skills, "b")
    reg.view(project)
    (project_skills / "b" / "SKILL.md").unlink()
    (project_skills / "b").rmdir()
    assert [e.key for e in reg.view(project).entries] == ["a"]


def test_edited_skill_is_seen_after_the_stat_interval(project, project_skills):
    clock = Clock()
    reg = Registry(clock=clock, stat_interval=0.5)
    d = write_skill(project_skills, "a", description="old")
    assert reg.view(project).by_key["a"].description == "old"
    write_skill(project_skills, "a", description="new and longer")
    st = os.stat(d / "SKILL.md")
    os.utime(d / "SKILL.md", ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    clock.now = 0.1
    assert reg.view(project).by_key["a"].description == "old"
    clock.now = 0.7
    assert reg.view(project).by_key["a"].description == "new and longer"


def test_skill_file_added_to_existing_dir_is_seen(project, project_skills):
    clock = Clock()
    reg = Registry(clock=clock)
    (project_skills / "late").mkdir()
    assert reg.view(project).entries == ()
    (project_skills / "late" / "SKILL.md").write_text("---\ndescription: d\n---\nb", "utf-8")
    assert reg.view(project).entries == ()  # the search dir itself did not change
    clock.now = 1.0
    assert [e.key for e in reg.view(project).entries] == ["late"]


def test_refresh_reloads_every_scope(project, project_skills, global_skills):
    reg = Registry(clock=Clock(), stat_interval=1e9)
    write_skill(global_skills, "g", description="v1")
    write_skill(project_skills, "p", description="v1")
    reg.view(project)
    write_skill(global_skills, "g", description="v2")
    write_skill(project_skills, "p", description="v2")
    reg.refresh()
    view = reg.view(project)
    assert view.by_key["g"].description == "v2"
    assert view.by_key["p"].description == "v2"


def test_disabling_in_skills_json_produces_a_new_view(project, project_skills, agent_dir):
    reg = Registry()
    write_skill(project_skills, "a")
    first = reg.view(project)
    assert first.by_key["a"].enabled
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills.json").write_text('{"version": 1, "disabled": ["a"]}', "utf-8")
    second = reg.view(project)
    assert second is not first
    assert not second.by_key["a"].enabled


def test_views_per_cwd_are_independent(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_skill(a / ".lemon" / "skill", "only-a")
    write_skill(b / ".lemon" / "skill", "only-b")
    reg = Registry()
    assert list(reg.view(a).by_key) == ["only-a"]
    assert list(reg.view(b).by_key) == ["only-b"]


def test_unchanged_files_are_not_reparsed_on_rescan(project, project_skills):
    reg = Registry(clock=Clock())
    write_skill(project_skills, "a")
    before = reg.view(project).by_key["a"]
    write_skill(project_skills, "b")
    assert reg.view(project).by_key["a"] is before


class OneServer:
    """A remote skill source: lists ``names`` once ``on``; counts how often it is asked."""

    def __init__(self) -> None:
        self.on = False
        self.asked = 0
        self.version = 0

    def generation(self, cwd: object) -> object:
        self.asked += 1
        return (self.version,) if self.on else ()

    def listings(self, cwd: object) -> list[Listing]:
        if not self.on:
            return []
        uri = "skill://pdf/SKILL.md"
        files = (RemoteFile(uri, "sha256:" + "0" * 64, 10),)
        skill = RemoteSkill("srv", uri, "pdf", "Fill PDF forms.", {"name": "pdf"}, files)
        return [Listing("srv", (skill,), (), lambda uri, limit: b"")]


def remote_keys(reg: Registry, cwd) -> list[str]:
    return [e.key for e in reg.view(cwd).entries if e.source == "mcp"]


def test_a_server_that_starts_offering_skills_is_seen_after_the_stat_interval(project):
    server, clock = OneServer(), Clock()
    current().put(Sources, Sources([server]))
    reg = Registry(clock=clock, stat_interval=0.5)
    assert remote_keys(reg, project) == []
    server.on = True  # e.g. "skills": "enabled" written into mcp.json
    clock.now = 0.1
    assert remote_keys(reg, project) == []
    clock.now = 0.6
    assert remote_keys(reg, project) == ["srv:pdf"]


def test_sources_listing_nothing_are_not_asked_on_every_view(project):
    server, clock = OneServer(), Clock()
    current().put(Sources, Sources([server]))
    reg = Registry(clock=clock, stat_interval=0.5)
    for _ in range(100):
        reg.view(project)
    assert server.asked == 1


def test_a_listing_source_is_asked_on_every_view_so_list_changed_shows_at_once(project):
    server, clock = OneServer(), Clock()
    server.on = True
    current().put(Sources, Sources([server]))
    reg = Registry(clock=clock, stat_interval=0.5)
    first = reg.view(project)
    assert reg.view(project) is first
    server.version += 1  # list_changed
    assert reg.view(project) is not first


def test_skills_json_change_or_invalidate_asks_the_sources_at_once(project, agent_dir):
    server, clock = OneServer(), Clock()
    current().put(Sources, Sources([server]))
    reg = Registry(clock=clock, stat_interval=0.5)
    assert remote_keys(reg, project) == []
    server.on = True
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills.json").write_text('{"version": 1, "skills": {"srv:*": {}}}', "utf-8")
    assert remote_keys(reg, project) == ["srv:pdf"]
    server.on = False
    reg.invalidate()
    assert remote_keys(reg, project) == []


def test_a_large_scope_holds_no_bodies_and_ranks_the_same(project, project_skills, monkeypatch):
    import lemon_skills
    from lemon_skills.skills.catalog import registry as registry_mod
    from lemon_skills.skills.ranking import find

    for i in range(12):
        service = ["kafka", "redis", "nginx"][i % 3]
        body = f"## Steps\n\nRotate the {service} logs {'nightly' if i < 6 else 'weekly'}.\n"
        description = f"Log rotation for {service} servers, variant {i}."
        write_skill(project_skills, f"ops-{i}", description=description, body=body)
    query = "nightly redis log rotation"
    full = [e.key for e in lemon_skills.find_relevant(query, cwd=project)]
    monkeypatch.setattr(registry_mod, "LEAN_FROM", 10)
    entries = Registry().view(project).enabled()
    assert all(e._body is None for e in entries)  # nothing held after the scan
    assert "Rotate the" in entries[0].read_body()
    assert entries[0]._body is None  # and reading it for an index keeps nothing either
    lean = find.build_index(entries)
    found = [m.entry.key for m in find.rank(lean, query)]
    assert found == full and found
    assert "Rotate the" in entries[0].body  # a body asked for by name is kept
    assert entries[0]._body is not None
