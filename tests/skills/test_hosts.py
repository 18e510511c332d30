"""Other hosts' layouts found beside each scope's skill dirs: noticed without a refresh, the
same from the manifest cache, and grouped by bundle in ``lemon skill list``."""

from __future__ import annotations

import json

from lemon_skills.cli import main
from lemon_skills.skills.catalog.registry import Registry
from tests.helpers.hosts import claude_plugin
from tests.helpers.skills import write_skill


def test_a_plugin_installed_later_is_noticed_without_a_refresh(agent_dir, project):
    reg = Registry(stat_interval=0)
    assert reg.view(project).by_key == {}
    claude_plugin(agent_dir / "plugins" / "commit-tools")
    assert "commit-tools:conventional-commits" in reg.view(project).by_key


def test_bundled_skills_load_the_same_from_the_manifest_cache(project):
    claude_plugin(project)
    first = Registry().view(project).by_key["commit-tools:conventional-commits"]
    again = Registry().view(project).by_key["commit-tools:conventional-commits"]
    assert again.bundle == first.bundle and again.description == first.description


def test_skill_list_groups_by_bundle_and_json_names_it(capsys, project, project_skills):
    claude_plugin(project)
    write_skill(project_skills, "plain")
    assert main(["skill", "list", "--by-bundle", "--cwd", str(project)]) == 0
    out = capsys.readouterr().out
    assert "BUNDLE" in out and "commit-tools (claude-plugin)" in out
    assert main(["skill", "list", "--json", "--cwd", str(project)]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["commit-tools:conventional-commits"]["bundle"]["kind"] == "claude-plugin"
    assert "bundle" not in rows["plain"]
