"""Installing from a plugin or marketplace source: its skills, audited, approved and locked
like any skill, each lock record naming the bundle it came from."""

from __future__ import annotations

import json
from pathlib import Path

from lemon_skills.skills.install.service import install_many
from tests.helpers.install import read_lock
from tests.helpers.skills import write_skill


def _marketplace(root: Path) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps(
            {
                "name": "acme-tools",
                "owner": {"name": "Acme"},
                "plugins": [
                    {"name": "review", "source": "./plugins/review"},
                    {"name": "docs", "source": "./plugins/docs"},
                ],
            }
        )
    )
    for plugin, skills in (("review", ["pr-review", "diff-summary"]), ("docs", ["adr"])):
        proot = root / "plugins" / plugin
        (proot / ".claude-plugin").mkdir(parents=True)
        (proot / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": plugin}))
        for name in skills:
            write_skill(proot / "skills", name, description=f"The {name} skill.")
    return root


def test_one_marketplace_plugin_installs_with_its_bundle_in_the_lock(tmp_path, agent_dir):
    src = _marketplace(tmp_path / "acme-tools")
    results = install_many(str(src), skills=["review:*"], approve=True)
    assert sorted(r.key for r in results) == ["diff-summary", "pr-review"]
    rec = read_lock(agent_dir)["skills"]["pr-review"]
    assert rec["bundle"]["kind"] == "claude-plugin" and rec["bundle"]["name"] == "review"
    assert rec["bundle"]["marketplace"] == "acme-tools"
    assert rec["audit"]["verdict"] in ("pass", "warn")
    assert not (agent_dir / "skill" / "adr").exists()


def test_a_single_skill_of_a_plugin_by_its_namespaced_name(tmp_path, agent_dir):
    src = _marketplace(tmp_path / "acme-tools")
    results = install_many(str(src), skills=["docs:adr"], approve=True)
    assert [r.key for r in results] == ["adr"]
