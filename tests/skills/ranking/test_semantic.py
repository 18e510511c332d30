"""The optional embedding model (needs the semantic extra and the model package)."""

from __future__ import annotations

import sqlite3

import pytest

import lemon_skills
from lemon_skills.skills import registry
from lemon_skills.skills.ranking import semantic
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.integration


def test_paraphrases_are_closer_than_unrelated_text():
    enc = semantic.encoder()
    v = enc.encode(
        ["merge two PDF files into one", "combine PDFs into a single document", "bake bread"]
    )
    sims = v @ v.T
    assert sims[0, 1] > 0.6 > sims[0, 2]
    assert abs(float((v[0] ** 2).sum()) - 1.0) < 1e-4


def test_batching_does_not_change_vectors():
    enc = semantic.encoder()
    texts = ["short", "a much longer sentence about deploying services to kubernetes"]
    together = enc.encode(texts)
    alone = enc.encode(texts[1:])
    assert float(together[1] @ alone[0]) > 0.9999


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
