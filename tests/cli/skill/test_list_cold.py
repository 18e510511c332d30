from __future__ import annotations

import json

from lemon_skills.cli import main
from tests.helpers.probe import lemon_in_new_process
from tests.helpers.skills import write_skill

#: Modules a cold `skill list` has no use for while the manifest cache is valid.
HEAVY = (
    "yaml",
    "tomllib",
    "filelock",
    "mcp",
    "lemon_skills.skills.api",
    "lemon_skills.skills.ranking.find",
)


def _list_in_new_process(project):
    stdout, probe = lemon_in_new_process(["skill", "list", "--json", "--cwd", str(project)], HEAVY)
    return json.loads(stdout), probe


def test_second_start_lists_from_the_cache_without_parsers_locks_or_ranking(
    capsys, project, project_skills
):
    write_skill(project_skills, "a", description="Alpha", extra="tags: [x]")
    write_skill(project_skills, "b", description="Beta")
    assert main(["skill", "disable", "b", "--cwd", str(project)]) == 0
    capsys.readouterr()
    first, _ = _list_in_new_process(project)  # no cache yet: parses and writes it
    second, probe = _list_in_new_process(project)
    assert probe == {"code": 0, "heavy": []}
    assert second == first
    assert [(d["key"], d["enabled"], d["tags"]) for d in second] == [
        ("a", True, ["x"]),
        ("b", False, []),
    ]


def test_first_start_without_a_cache_lists_the_same(capsys, project, project_skills, monkeypatch):
    write_skill(project_skills, "a", description="Alpha", extra="version: 2\nplatforms: [linux]")
    cached, _ = _list_in_new_process(project)
    cached, _ = _list_in_new_process(project)
    monkeypatch.setenv("LEMON_SKILLS_CACHE", "0")
    uncached, probe = _list_in_new_process(project)
    assert uncached == cached
    assert cached[0]["version"] == "2" and cached[0]["platforms"] == ["linux"]
    assert probe["heavy"] == ["yaml"]  # parsing needs YAML, and nothing else on the list


def test_list_json_in_a_pipe_keeps_non_ascii_text(capsys, project, project_skills):
    text = "Café naïve résumé — ✓ 日本語"
    write_skill(project_skills, "u", description=text)
    for _ in range(2):  # parsed, then from the cache
        assert main(["skill", "list", "--json", "--cwd", str(project)]) == 0
        assert json.loads(capsys.readouterr().out)[0]["description"] == text
