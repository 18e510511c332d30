from __future__ import annotations

import datetime
import json
import os
import shutil
import stat

import pytest

from lemon_skills.skills.catalog import cache
from lemon_skills.skills.catalog.registry import Registry
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

    monkeypatch.setattr("lemon_skills.skills.catalog.registry.load_candidate", no_parse)
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
        "lemon_skills.skills.catalog.registry.load_candidate",
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
    assert "a" in cache.load(project_skills)


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


def _edit_cache(search_dir, change):
    path = cache.cache_path(search_dir)
    data = json.loads(path.read_text("utf-8"))
    change(data)
    path.write_text(json.dumps(data), "utf-8")


def _never_parse(monkeypatch):
    monkeypatch.setattr(
        "lemon_skills.skills.catalog.registry.load_candidate",
        lambda *a: (_ for _ in ()).throw(AssertionError("reparsed")),
    )


def test_truncated_cache_is_ignored_and_rewritten(project, project_skills):
    write_skill(project_skills, "a", description="fine")
    write_skill(project_skills, "b", description="also fine")
    Registry().view(project)
    path = cache.cache_path(project_skills)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    v = Registry().view(project)
    assert [(e.key, e.description) for e in v.entries] == [("a", "fine"), ("b", "also fine")]
    assert sorted(cache.load(project_skills)) == ["a", "b"]


def test_cache_from_another_format_or_parser_version_is_ignored(
    project, project_skills, monkeypatch
):
    write_skill(project_skills, "a", description="from the file")
    Registry().view(project)

    def lie(data):
        data["descriptions"][data["keys"].index("a")] = "from an old cache"

    _edit_cache(project_skills, lie)
    assert Registry().view(project).by_key["a"].description == "from an old cache"
    for field, value in (("version", cache.FORMAT_VERSION - 1), ("parser", -1)):
        _edit_cache(project_skills, lie)
        _edit_cache(project_skills, lambda data, f=field, v=value: data.update({f: v}))
        assert Registry().view(project).by_key["a"].description == "from the file"


def test_cache_written_for_another_dir_is_ignored(project, project_skills):
    write_skill(project_skills, "a", description="real")
    Registry().view(project)

    def other_dir(data):
        data["dir"] = "/somewhere/else"
        data["descriptions"][0] = "not this dir's"

    _edit_cache(project_skills, other_dir)
    assert Registry().view(project).by_key["a"].description == "real"


def _set(column, value, key=None):
    def change(data):
        if key is None:
            data[column][data["keys"].index("a")] = value
        else:
            data[column][key] = value

    return change


@pytest.mark.parametrize(
    "damage",
    [
        _set("descriptions", 42),
        _set("descriptions", None),  # "failed to load" without the reason
        _set("names", 7),
        _set("sigs", "123"),
        _set("fields", {"tags": 5}, key="a"),
        _set("fields", ["tags"], key="a"),
        _set("fields", {"no_such_field": "x"}, key="a"),
        _set("fields", {"requires": {"bins": "git"}}, key="a"),
        _set("diagnostics", [["reason", "code", "loud"]], key="a"),
        _set("diagnostics", "not a list", key="a"),
        _set("diagnostics", [], key="a"),
        _set("keys", ["a"]),  # a key that is not a string
        lambda data: data["names"].pop(),  # columns of different lengths
        lambda data: data.update(keys={"a": 0}),
        lambda data: data.update(fields=[]),
        lambda data: data.pop("descriptions"),
    ],
)
def test_damaged_record_is_reparsed_not_trusted(project, project_skills, damage):
    write_skill(project_skills, "a", description="Alpha", extra="tags: [x]")
    write_skill(project_skills, "b", description="Beta")
    Registry().view(project)
    _edit_cache(project_skills, damage)
    v = Registry().view(project)
    assert v.by_key["a"].description == "Alpha"
    assert v.by_key["a"].to_dict()["tags"] == ["x"]
    assert v.by_key["b"].description == "Beta"
    assert [d.code for d in v.diagnostics] == []
    assert sorted(cache.load(project_skills)) == ["a", "b"]  # and the file was repaired


def test_same_size_edit_is_seen_by_the_next_process(project, project_skills):
    d = write_skill(project_skills, "a", description="aaaa")
    Registry().view(project)
    write_skill(project_skills, "a", description="bbbb")
    st = os.stat(d / "SKILL.md")
    os.utime(d / "SKILL.md", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert Registry().view(project).by_key["a"].description == "bbbb"


def test_every_manifest_field_survives_the_cache(project, project_skills, monkeypatch):
    write_skill(
        project_skills,
        "full",
        name="Full Name",
        description="Everything  set",
        extra="version: '1.2'\nauthor: Ann\nlicense: MIT\ncompatibility: needs git\n"
        "tags: [a, b]\nkeywords: k\ncategory: ops\nplatforms: [linux]\n"
        "allowed-tools: Bash Read\ndisable-model-invocation: true\n"
        "requires:\n  bins: [git]\n  any_bins: [docker, podman]\n  env: [TOKEN]\n"
        "  config: [x.y]\n  mcp: [srv]\nmetadata:\n  owner: team",
    )
    write_skill(project_skills, "bare", text="Just a body, no frontmatter.\n")
    write_skill(project_skills, "toml", text='+++\nname = "toml"\ndescription = "T"\n+++\nBody\n')
    write_skill(project_skills, "anon", text="---\ndescription: no name\n---\nBody\n")
    fresh = Registry().view(project)
    _never_parse(monkeypatch)
    cached = Registry().view(project)
    assert [e.key for e in cached.entries] == ["anon", "full", "toml"]
    assert ("bare", "no_frontmatter") in [(d.key, d.code) for d in cached.diagnostics]
    for key in ("anon", "full", "toml"):
        a, b = fresh.by_key[key], cached.by_key[key]
        assert b.to_dict() == a.to_dict()
        assert b.manifest == a.manifest
        assert b.body == a.body
    assert cached.by_key["full"].manifest.requires.any_bins == ("docker", "podman")
    assert cached.by_key["full"].manifest.metadata == {"owner": "team"}
    assert cached.by_key["anon"].manifest.name is None
    assert cached.by_key["anon"].name == "anon"
    assert cached.by_key["toml"].manifest.format == "toml"
    assert [(d.key, d.code) for d in cached.diagnostics] == [
        (d.key, d.code) for d in fresh.diagnostics
    ]


def test_warnings_are_served_from_the_cache(project, project_skills, monkeypatch):
    write_skill(project_skills, "quiet", description=None)
    before = [(d.key, d.code, d.level) for d in Registry().view(project).diagnostics]
    _never_parse(monkeypatch)
    after = [(d.key, d.code, d.level) for d in Registry().view(project).diagnostics]
    assert after == before == [("quiet", "no_description", "warning")]


def test_added_and_removed_skills_are_seen_by_a_warm_registry(project, project_skills):
    write_skill(project_skills, "a")
    reg = Registry()
    assert [e.key for e in reg.view(project).entries] == ["a"]
    write_skill(project_skills, "b")
    assert [e.key for e in reg.view(project).entries] == ["a", "b"]
    assert sorted(cache.load(project_skills)) == ["a", "b"]
    shutil.rmtree(project_skills / "a")
    assert [e.key for e in reg.view(project).entries] == ["b"]
    assert [e.key for e in Registry().view(project).entries] == ["b"]


def test_cache_file_is_private_to_the_user(project, project_skills):
    write_skill(project_skills, "a")
    Registry().view(project)
    assert stat.S_IMODE(cache.cache_path(project_skills).stat().st_mode) == 0o600


def test_an_edit_is_saved_to_a_delta_and_read_back_without_parsing(
    project, project_skills, monkeypatch
):
    for i in range(16):
        write_skill(project_skills, f"s{i:02d}", description=f"Skill number {i}")
    Registry().view(project)
    path = cache.cache_path(project_skills)
    before = path.stat()
    write_skill(project_skills, "s03", description="Edited skill")
    Registry().view(project)
    # The file is not rewritten for one edit: its record goes to the delta beside it.
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert json.loads(cache.delta_path(project_skills).read_text("utf-8"))["keys"] == ["s03"]
    with monkeypatch.context() as m:
        _never_parse(m)
        v = Registry().view(project)
        assert v.by_key["s03"].description == "Edited skill"
        assert v.by_key["s04"].description == "Skill number 4"
    # Past an eighth of the records, the file is written whole and the delta dropped.
    for i in (5, 6):
        write_skill(project_skills, f"s{i:02d}", description=f"Edited {i}")
    Registry().view(project)
    assert path.stat().st_ino != before.st_ino
    assert not cache.delta_path(project_skills).exists()
    _never_parse(monkeypatch)
    assert Registry().view(project).by_key["s06"].description == "Edited 6"


def test_a_delta_of_a_replaced_cache_file_is_ignored(project, project_skills):
    for i in range(16):
        write_skill(project_skills, f"s{i:02d}", description=f"Skill number {i}")
    Registry().view(project)
    write_skill(project_skills, "s03", description="Edited skill")
    Registry().view(project)
    delta = cache.delta_path(project_skills).read_bytes()
    write_skill(project_skills, "s03", description="Edited again")
    shutil.rmtree(project_skills / "s09")
    for i in range(16, 20):
        write_skill(project_skills, f"s{i:02d}", description=f"Skill number {i}")
    Registry().view(project)  # enough changes: the file is written whole
    cache.delta_path(project_skills).write_bytes(delta)  # a delta of the old file
    assert Registry().view(project).by_key["s03"].description == "Edited again"
    assert "s03" in cache.load(project_skills) and not cache.load(project_skills).delta_keys
