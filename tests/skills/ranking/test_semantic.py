"""Hybrid skill ranking with the optional embedding model (integration tests need the semantic
extra and the model package; the others use a stand-in for the model); the encoder itself is
tested in tests/search/test_embed.py."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

import lemon_skills
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.ranking import semantic
from tests.helpers.skills import write_skill


class StandIn:
    """Stands in for the model: each text gets the vector of the first marker word it holds."""

    np = np
    identity = "stand-in"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode(self, texts: list[str], *, batch: int = 8) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for row, t in enumerate(texts):
            vec = next(v for marker, v in self.table.items() if marker in t)
            out[row, : len(vec)] = np.asarray(vec) / np.linalg.norm(vec)
        return out


def test_similarity_discounts_what_every_skill_shares(project, project_skills):
    # Axis 0 is what all three skills have in common (think "helps with a task"); the generic
    # skill is almost nothing else, so raw cosine ranks it first for a request that is mostly
    # that common part but specifically about PDFs.
    write_skill(project_skills, "generic-helper", description="generic")
    write_skill(project_skills, "pdf-tools", description="pdfs")
    write_skill(project_skills, "image-tools", description="images")
    enc = StandIn(
        {
            "generic": [1.0, 0.0, 0.0],
            "pdfs": [0.6, 0.8, 0.0],
            "images": [0.6, 0.0, 0.8],
            "request": [0.9, 0.436, 0.0],
        }
    )
    entries = registry.view(project).enabled()
    keys = [e.key for e in entries]
    sim = semantic.Similarity(entries, enc)  # type: ignore[arg-type]
    raw = semantic.doc_vectors(entries, enc) @ enc.encode(["request"])[0]  # type: ignore[arg-type]
    assert keys[int(raw.argmax())] == "generic-helper"
    got = sim("request", floor=-1.0)
    assert keys[max(got, key=got.__getitem__)] == "pdf-tools"
    assert got[keys.index("pdf-tools")] > 0.1 > got[keys.index("image-tools")]


@pytest.mark.integration
def test_the_model_ranks_a_paraphrase_first_and_skill_vectors_are_cached(project, project_skills):
    # Two skills only: whether such a request clears the answer bar depends on the catalogue
    # (docs/ranking.md, small catalogues); which skill it is closest to does not.
    write_skill(project_skills, "code-simplifier", description="Simplify and refine code.")
    write_skill(project_skills, "release-notes", description="Write release notes.")
    lemon_skills.find_relevant("tidy up my function so it reads better", cwd=project, semantic=True)
    with sqlite3.connect(semantic.store_path()) as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    entries = registry.view(project).enabled()
    got = semantic.Similarity(entries)("tidy up my function so it reads better", floor=-1.0)
    assert entries[max(got, key=got.__getitem__)].key == "code-simplifier"
    again = semantic.doc_vectors(entries, semantic.encoder())
    assert again.shape == (2, 384)
