"""Served skills rank exactly as the same skills on disk: ``find_relevant`` over the bench
skills consumed from ``lemon mcp serve`` returns the keys it returns over those skills on disk.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from benchmarks.corpus import make_corpus

import lemon_skills
from lemon_skills.mcp.source import reset_default_source
from tests.helpers.bench import find_bench

pytestmark = pytest.mark.usefixtures("trusted_projects")

QUERIES = 40


BENCH = find_bench()


@pytest.fixture
def bench() -> Path:
    if BENCH is None:
        pytest.skip("no bench skills (set LEMON_BENCH_DIR)")
    return BENCH


def local_key(entry: lemon_skills.Entry) -> str:
    """The served folder of an MCP entry: the first segment of its skill path."""
    return entry.real_path.split("://", 1)[1].split("/", 1)[0]


def test_find_relevant_over_served_bench_skills_matches_disk(tmp_path, bench, project):
    served = tmp_path / "served"
    make_corpus(served, len(list((bench / "skills").iterdir())), source=bench / "skills")
    (project / ".lemon").mkdir()
    (project / ".lemon" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "bench": {
                        "command": sys.executable,
                        "args": ["-m", "lemon_skills", "mcp", "serve", "--cwd", str(served)],
                        "skills": "enabled",
                    }
                }
            }
        )
    )
    try:
        consumed = [e for e in lemon_skills.list(cwd=project) if e.source == "mcp"]
        assert len(consumed) > 400
        # The same skills on disk, in a project of their own.
        disk = tmp_path / "disk"
        (disk / ".git").mkdir(parents=True)
        for entry in consumed:
            key = local_key(entry)
            shutil.copytree(served / ".lemon" / "skill" / key, disk / ".lemon" / "skill" / key)
        lines = (bench / "queries_dev.jsonl").read_text().splitlines()[:QUERIES]
        for line in lines:
            query = json.loads(line)["query"]
            want = [e.key for e in lemon_skills.find_relevant(query, cwd=disk, max_results=5)]
            got = lemon_skills.find_relevant(query, cwd=project, max_results=5)
            assert [local_key(e) for e in got] == want, query
    finally:
        reset_default_source()
