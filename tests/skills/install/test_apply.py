"""What a fetched tree offers for install (``find_skills``) and the staging dir every install
goes through. The end-to-end install paths are in ``test_service``."""

from __future__ import annotations

import json
import os

import pytest

from lemon_skills.skills.install.apply import find_skills, staging
from tests.helpers.skills import write_skill


def _rels(root) -> list[str]:
    return [f.rel for f in find_skills(root)]


def test_a_tree_whose_root_is_a_skill_offers_only_that_skill(tmp_path):
    write_skill(tmp_path, "pdf")
    write_skill(tmp_path / "pdf" / "skills", "nested")
    found = find_skills(tmp_path / "pdf")
    assert [(f.rel, f.dir_name, f.declared) for f in found] == [("", "pdf", "pdf")]


def test_skills_are_found_at_the_top_in_containers_and_in_category_folders(tmp_path):
    write_skill(tmp_path, "top")
    write_skill(tmp_path / ".claude" / "skills", "claude-one")
    write_skill(tmp_path / "skills" / "documents", "xlsx")  # skills/<category>/<skill>
    write_skill(tmp_path / "node_modules", "vendored")
    assert _rels(tmp_path) == [".claude/skills/claude-one", "skills/documents/xlsx", "top"]


def test_a_symlinked_skill_dir_is_not_offered(tmp_path):
    outside = write_skill(tmp_path / "elsewhere", "secret")
    (tmp_path / "src" / "skills").mkdir(parents=True)
    os.symlink(outside, tmp_path / "src" / "skills" / "secret")
    assert _rels(tmp_path / "src") == []


def test_a_marketplace_offers_each_plugin_skill_with_its_bundle(tmp_path):
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "acme", "plugins": [{"name": "review", "source": "./p/review"}]})
    )
    write_skill(market / "p" / "review" / "skills", "pr-check")
    [found] = find_skills(market)
    assert found.rel == "p/review/skills/pr-check"
    assert found.bundle is not None
    assert (found.bundle.name, found.bundle.marketplace) == ("review", "acme")
    assert found.bundle.root == "p/review"  # inside the source, not the staging copy


def test_staging_is_beside_the_destination_and_removed_even_on_failure(tmp_path):
    root = tmp_path / "skill"
    root.mkdir()
    with pytest.raises(RuntimeError), staging(root) as stage:
        assert stage.parent == root and stage.name.startswith(".staging-")
        (stage / "src").mkdir()
        raise RuntimeError("fetch failed")
    assert list(root.iterdir()) == []
