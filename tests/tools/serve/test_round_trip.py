"""``lemon mcp serve`` consumed by lemon's own client from another project (stdio, real process):
skills arrive as ``<server>:<name>`` entries, off until enabled, verified before use."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import lemon_skills
from lemon_skills.mcp.source import reset_default_source
from lemon_skills.skills.remote import store
from lemon_skills.tools.read import read_skill
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.usefixtures("trusted_projects")

GUIDE = "# Guide\n\nStep one.\n"


@pytest.fixture
def served(tmp_path: Path) -> Path:
    """A project whose skills are served: alpha (with a guide) and beta."""
    root = tmp_path / "served"
    skills = root / ".lemon" / "skill"
    alpha = write_skill(skills, "alpha", description="Deploy kubernetes clusters with helm.")
    (alpha / "references").mkdir()
    (alpha / "references" / "guide.md").write_text(GUIDE)
    write_skill(skills, "beta", description="Write release notes from git history.")
    return root


def configure(project: Path, served: Path, **entry: Any) -> None:
    cfg = {
        "command": sys.executable,
        "args": ["-m", "lemon_skills", "mcp", "serve", "--cwd", str(served)],
        **entry,
    }
    (project / ".lemon").mkdir(exist_ok=True)
    (project / ".lemon" / "mcp.json").write_text(json.dumps({"mcpServers": {"srv": cfg}}))


@pytest.fixture(autouse=True)
def fresh_source():
    yield
    reset_default_source()


def mcp_keys(project: Path) -> list[str]:
    return [e.key for e in lemon_skills.list(cwd=project) if e.source == "mcp"]


def test_served_skills_are_listed_without_fetching_and_read_verified(project, served):
    configure(project, served, skills="enabled")
    entries = {e.key: e for e in lemon_skills.list(cwd=project) if e.source == "mcp"}
    assert sorted(entries) == ["srv:alpha", "srv:beta"]
    assert entries["srv:alpha"].to_dict()["server"] == "srv"
    assert not (store.cache_dir() / "blobs").exists()  # listing fetched no file

    full = read_skill.call({"key": "srv:alpha"}, lemon_skills.ToolContext(cwd=project))
    assert not full.is_error
    assert "MCP server 'srv'; untrusted" in full.text
    assert "Deploy kubernetes clusters" in full.text
    guide = read_skill.call(
        {"key": "srv:alpha", "view": "file", "path": "references/guide.md"},
        lemon_skills.ToolContext(cwd=project),
    )
    assert guide.text.endswith(GUIDE.rstrip("\n")) or GUIDE.strip() in guide.text
    assert [e.key for e in lemon_skills.find_relevant("helm kubernetes", cwd=project)] == [
        "srv:alpha"
    ]


def test_skills_are_off_until_the_user_enables_the_server(project, served):
    configure(project, served)
    assert mcp_keys(project) == []
    lemon_skills.enable("srv:*", cwd=project)
    assert mcp_keys(project) == ["srv:alpha", "srv:beta"]


def test_a_local_skill_of_the_same_name_shadows_the_served_one(project, served, project_skills):
    write_skill(project_skills, "beta", description="My own release notes.")
    configure(project, served, skills="enabled")
    assert mcp_keys(project) == ["srv:alpha"]
    assert any(
        "srv:beta is hidden by the local skill 'beta'" in d.reason
        for d in lemon_skills.diagnostics(cwd=project)
    )


def test_a_file_changed_after_listing_is_refused_and_not_cached(project, served):
    configure(project, served, skills="enabled", protocol="legacy")
    assert "srv:alpha" in mcp_keys(project)
    skill_md = served / ".lemon" / "skill" / "alpha" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("Do the thing.", "Do evil."))
    result = read_skill.call({"key": "srv:alpha"}, lemon_skills.ToolContext(cwd=project))
    assert result.is_error
    assert "refused" in result.text
    assert "Do evil." not in result.text
    blobs = store.cache_dir() / "blobs"
    assert (
        not any(b"Do evil." in p.read_bytes() for p in blobs.glob("*")) if blobs.exists() else True
    )


def test_list_changed_brings_a_new_skill_in(project, served):
    configure(project, served, skills="enabled", protocol="legacy")
    assert mcp_keys(project) == ["srv:alpha", "srv:beta"]
    write_skill(served / ".lemon" / "skill", "gamma", description="Gamma rays.")
    deadline = time.monotonic() + 20
    while "srv:gamma" not in mcp_keys(project):
        assert time.monotonic() < deadline, "no list_changed within 20 s"
        time.sleep(0.2)
