"""``lemon mcp serve --agent NAME`` serves only what that agent's skill profile lets it see."""

from __future__ import annotations

import json
from types import SimpleNamespace

import anyio
import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.tools.serve.server import Options, SkillServer
from tests.helpers.skills import write_skill


def _project(project, project_skills):
    write_skill(project_skills, "git-commit", description="Write git commit messages.")
    write_skill(project_skills, "git-rebase", description="Rebase git branches safely.")
    (project / ".lemon" / "skills.json").write_text(
        json.dumps({"version": 1, "profiles": {"reviewer": {"deny": ["git-rebase"]}}})
    )


def _call(server: SkillServer, name: str, args: dict) -> tuple[str, bool]:
    params = SimpleNamespace(name=name, arguments=args)
    out = anyio.run(server._call_tool, None, params)
    return out.content[0].text, bool(out.is_error)


def test_a_served_profile_hides_denied_skills_from_every_surface(project, project_skills):
    _project(project, project_skills)
    server = SkillServer(Options(cwd=project, agent="reviewer"))
    assert {s.entry.key for s in server.catalog.skills.values()} == {"git-commit"}
    found, _ = _call(server, "find_skills", {"query": "rebase git branches"})
    assert "git-rebase" not in found
    text, is_error = _call(server, "read_skill", {"key": "git-rebase"})
    assert is_error and "Rebase git branches" not in text
    assert not _call(server, "read_skill", {"key": "git-commit"})[1]
    everyone = SkillServer(Options(cwd=project))
    assert "git-rebase" in {s.entry.key for s in everyone.catalog.skills.values()}


def test_serving_an_agent_without_a_profile_is_refused(project, project_skills):
    _project(project, project_skills)
    with pytest.raises(ConfigError, match="no skill profile"):
        SkillServer(Options(cwd=project, agent="reviwer"))
