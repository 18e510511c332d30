"""Hybrid skill ranking with the optional embedding model (needs the semantic extra and the
model package); the encoder itself is tested in tests/search/test_embed.py."""

from __future__ import annotations

import sqlite3

import pytest

import lemon_skills
from lemon_skills.skills import registry
from lemon_skills.skills.ranking import semantic
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.integration


def test_hybrid_finds_a_paraphrase_and_caches_skill_vectors(project, project_skills):
    write_skill(project_skills, "code-simplifier", description="Simplify and refine code.")
    write_skill(project_skills, "release-notes", description="Write release notes.")
    found = lemon_skills.find_relevant(
        "tidy up my function so it reads better", cwd=project, semantic=True
    )
    assert [e.key for e in found][:1] == ["code-simplifier"]
    with sqlite3.connect(semantic.store_path()) as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    entries = registry.view(project).enabled()
    again = semantic.doc_vectors(entries, semantic.encoder())
    assert again.shape == (2, 384)
