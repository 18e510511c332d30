"""The facade's enable/disable of one skill or a whole namespace (``<prefix>:*``: a plugin's
skills, an MCP server's, the Cursor rules)."""

from __future__ import annotations

import json

import lemon_skills
from lemon_skills.skills.selection import relevance
from lemon_skills.tools.mcp_skills import McpSkillSource
from tests.helpers.hosts import claude_plugin, write_json
from tests.helpers.skills import write_skill


def _enabled(project) -> dict[str, bool]:
    return {e.key: e.enabled for e in lemon_skills.list(cwd=project)}


def test_a_plugin_namespace_is_disabled_and_enabled_as_a_whole(project, project_skills):
    claude_plugin(project, name="review")
    write_skill(project_skills, "plain")
    assert lemon_skills.disable("review:*", cwd=project)
    assert _enabled(project) == {"plain": True, "review:conventional-commits": False}
    write_skill(project / "skills", "late", description="Added to the plugin later.")
    lemon_skills.refresh()  # a plugin's new skill is otherwise seen within the sweep interval
    assert _enabled(project)["review:late"] is False
    assert lemon_skills.status("review:late", cwd=project).disabled_in == ("global",)
    assert lemon_skills.enable("review:*", cwd=project)
    assert all(_enabled(project).values())


def test_an_mcp_server_namespace_switches_the_server_and_its_skills(project, trusted_projects):
    write_json(project / ".lemon" / "mcp.json", {"mcpServers": {"srv": {"command": "srv-mcp"}}})
    assert McpSkillSource().servers(project) == []
    lemon_skills.enable("srv:*", cwd=project)
    assert McpSkillSource().servers(project) == ["srv"]
    lemon_skills.disable("srv:*", cwd=project)
    assert McpSkillSource().servers(project) == []


def test_disabling_a_server_namespace_overrides_skills_enabled_in_its_entry(
    project, trusted_projects
):
    # mcp.json turns the server's skills on; the user's `disable srv:*` must still win, or
    # the server would be started to list skills that are all hidden.
    entry = {"command": "srv-mcp", "skills": "enabled"}
    write_json(project / ".lemon" / "mcp.json", {"mcpServers": {"srv": entry}})
    assert McpSkillSource().servers(project) == ["srv"]
    lemon_skills.disable("srv:*", cwd=project)
    assert McpSkillSource().servers(project) == []
    lemon_skills.enable("srv:*", cwd=project)
    assert McpSkillSource().servers(project) == ["srv"]


def test_a_plugin_and_a_server_of_one_name_share_the_namespace(
    project, agent_dir, trusted_projects
):
    # A plugin skill `docs:x` and a served `docs:x` would be the same key: `docs:*` is both.
    claude_plugin(project, name="docs")
    write_json(project / ".lemon" / "mcp.json", {"mcpServers": {"docs": {"command": "d"}}})
    lemon_skills.enable("docs:*", cwd=project)
    assert McpSkillSource().servers(project) == ["docs"]
    assert _enabled(project) == {"docs:conventional-commits": True}
    lemon_skills.disable("docs:*", cwd=project)
    assert McpSkillSource().servers(project) == []
    assert _enabled(project) == {"docs:conventional-commits": False}
    state = json.loads((agent_dir / "skills.json").read_text())
    assert state["disabled"] == ["docs:*"]


def test_one_skill_of_a_plugin_is_disabled_alone(project):
    claude_plugin(project, name="review")
    write_skill(project / "skills", "second", description="Second skill.")
    lemon_skills.disable("review:second", cwd=project)
    assert _enabled(project) == {"review:conventional-commits": True, "review:second": False}


def _large_tree(project_skills, n=70):
    topics = ["postgres query tuning", "kubernetes deployment", "pdf merging", "release notes"]
    for i in range(n):
        topic = topics[i % len(topics)]
        write_skill(
            project_skills,
            f"skill-{i}",
            description=f"Help with {topic}, variant {i}.",
            body=f"## Usage\n\nSteps for {topic}.\n\n" + "Background prose. " * (i % 7),
        )


def test_a_large_tree_never_indexed_answers_first_from_a_focused_index(
    project, project_skills, monkeypatch
):
    from lemon_skills.skills.ranking import snapshot

    monkeypatch.setattr(snapshot, "FOCUS_MIN", 10)
    _large_tree(project_skills)
    query = "tune a slow postgres query"
    first = [e.key for e in lemon_skills.find_relevant(query, cwd=project, max_results=5)]
    # The focused answer wrote no index and left the full one to build.
    assert not snapshot.cache_dir().exists()
    assert relevance.index_pending(cwd=project)
    second = [e.key for e in lemon_skills.find_relevant(query, cwd=project, max_results=5)]
    assert first[0] == second[0] and first[0].startswith("skill-")
    assert set(first) == set(second)
    assert not relevance.index_pending(cwd=project)
    assert list(snapshot.cache_dir().glob("*.idx"))


def test_a_tree_whose_index_is_cached_is_never_answered_from_a_focused_one(
    project, project_skills, monkeypatch
):
    from lemon_skills.skills.ranking import snapshot

    monkeypatch.setattr(snapshot, "FOCUS_MIN", 10)
    _large_tree(project_skills)
    assert relevance.build_ranking_index(cwd=project) == 70
    lemon_skills.refresh()
    lemon_skills.find_relevant("release notes", cwd=project)
    assert not relevance.index_pending(cwd=project)
