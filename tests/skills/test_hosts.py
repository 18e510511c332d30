"""Skills laid out as other hosts ship them: Claude Code, Codex and Gemini CLI plugin bundles
and marketplaces, and Cursor rules. The fixtures follow each host's documented layout."""

from __future__ import annotations

import json
from pathlib import Path

from lemon_skills.cli import main
from lemon_skills.skills.registry import Registry
from tests.helpers.skills import write_skill


def _json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def claude_plugin(root: Path, name: str = "commit-tools") -> Path:
    """A Claude Code plugin: manifest in .claude-plugin/, skills/, commands/, hooks/."""
    _json(
        root / ".claude-plugin" / "plugin.json",
        {
            "name": name,
            "version": "1.2.0",
            "description": "Commit helpers",
            "author": {"name": "Dev Team", "email": "dev@example.com"},
            "license": "MIT",
        },
    )
    write_skill(root / "skills", "conventional-commits", description="Write conventional commits.")
    (root / "commands").mkdir(exist_ok=True)
    (root / "commands" / "commit.md").write_text("---\ndescription: Commit\n---\nCommit it.\n")
    _json(root / "hooks" / "hooks.json", {"hooks": {}})
    return root


def test_project_that_is_a_claude_plugin_exposes_its_skills_namespaced(project):
    claude_plugin(project)
    v = Registry().view(project)
    entry = v.by_key["commit-tools:conventional-commits"]
    assert entry.bundle is not None
    assert (entry.bundle.kind, entry.bundle.name, entry.bundle.root) == (
        "claude-plugin",
        "commit-tools",
        str(project),
    )
    assert entry.description == "Write conventional commits."
    assert [
        k for k in v.by_key if not k.startswith("commit-tools:")
    ] == []  # commands are not skills


def test_claude_marketplace_with_listed_skills_and_plugin_folders(project):
    # The layout of a skills collection published as a marketplace: one entry lists skill dirs
    # (strict: false), another points at a plugin folder, a third is remote.
    write_skill(project / "document-skills", "xlsx", description="Spreadsheets.")
    write_skill(project / "document-skills", "docx", description="Word documents.")
    write_skill(project / "document-skills", "unlisted", description="Not in the marketplace.")
    claude_plugin(project / "plugins" / "review", name="review")
    _json(
        project / ".claude-plugin" / "marketplace.json",
        {
            "name": "acme-skills",
            "owner": {"name": "Acme", "email": "tools@acme.example"},
            "metadata": {"description": "Acme's skills", "version": "1.0.0"},
            "plugins": [
                {
                    "name": "document-skills",
                    "description": "Office documents",
                    "source": "./",
                    "strict": False,
                    "skills": ["./document-skills/xlsx", "./document-skills/docx"],
                },
                {"name": "review", "source": "./plugins/review"},
                {"name": "remote", "source": {"source": "github", "repo": "acme/remote"}},
                {"name": "escape", "source": "../outside"},
            ],
        },
    )
    v = Registry().view(project)
    keys = sorted(v.by_key)
    assert keys == [
        "document-skills:docx",
        "document-skills:xlsx",
        "review:conventional-commits",
    ]
    xlsx = v.by_key["document-skills:xlsx"].bundle
    assert xlsx is not None and xlsx.marketplace == "acme-skills"
    codes = {d.code for d in v.diagnostics}
    assert {"bundle_remote", "bundle_escape"} <= codes


def test_codex_plugin_and_marketplace_at_the_repo_root(project):
    # As Codex documents it: .codex-plugin/plugin.json points "skills" at ./skills/, and
    # .agents/plugins/marketplace.json lists the repo root as a local source.
    _json(
        project / ".codex-plugin" / "plugin.json",
        {
            "name": "agent-skills",
            "version": "1.0.0",
            "description": "Engineering skills",
            "skills": "./skills/",
            "interface": {"displayName": "Agent Skills", "category": "Productivity"},
        },
    )
    _json(
        project / ".agents" / "plugins" / "marketplace.json",
        {
            "name": "agent-skills",
            "interface": {"displayName": "Agent Skills"},
            "plugins": [
                {
                    "name": "agent-skills",
                    "source": {"source": "local", "path": "./"},
                    "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                    "category": "Productivity",
                }
            ],
        },
    )
    write_skill(project / "skills", "spec-driven-development", description="Write a spec first.")
    v = Registry().view(project)
    assert list(v.by_key) == ["agent-skills:spec-driven-development"]
    bundle = v.by_key["agent-skills:spec-driven-development"].bundle
    assert bundle is not None and bundle.kind == "codex-plugin"
    assert not [d for d in v.diagnostics if d.code == "shadowed"]  # listed twice, loaded once


def test_gemini_extension_installed_under_the_global_plugins_dir(agent_dir, project):
    ext = agent_dir / "plugins" / "security"
    _json(
        ext / "gemini-extension.json",
        {
            "name": "security",
            "version": "0.3.0",
            "contextFileName": "GEMINI.md",
            "mcpServers": {"scanner": {"command": "node", "args": ["scanner.js"]}},
        },
    )
    (ext / "GEMINI.md").write_text("Security context.\n")
    write_skill(ext / "skills", "threat-model", description="Model threats.")
    claude_plugin(agent_dir / "plugins" / "commit-tools")
    v = Registry().view(project)
    assert sorted(v.by_key) == ["commit-tools:conventional-commits", "security:threat-model"]
    entry = v.by_key["security:threat-model"]
    assert entry.source == "global" and entry.bundle is not None
    assert entry.bundle.kind == "gemini-extension"


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


CURSOR_RULES = {
    # An auto-attached rule, globs written the way Cursor writes them (not valid YAML).
    "react-components.mdc": (
        "---\ndescription: Standards for React components\n"
        "globs: src/components/**/*.tsx, *.jsx\nalwaysApply: false\n---\n"
        "- Use function components.\n"
    ),
    "always.mdc": "---\ndescription:\nglobs:\nalwaysApply: true\n---\nAnswer in British English.\n",
    "api-guidelines.mdc": (
        "---\ndescription: How to design REST endpoints in this service\nglobs:\n"
        "alwaysApply: false\n---\nUse nouns for resources.\n"
    ),
    "manual.mdc": "---\ndescription:\nglobs:\nalwaysApply: false\n---\nOnly when asked.\n",
    "frontend/styling.mdc": (
        '---\ndescription: "CSS conventions"\nglobs: ["**/*.css", "**/*.scss"]\n---\nUse BEM.\n'
    ),
}


def cursor_rules(project: Path) -> None:
    for rel, text in CURSOR_RULES.items():
        path = project / ".cursor" / "rules" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (project / ".cursorrules").write_text("Prefer small functions.\n")


def test_cursor_rules_are_skills_with_their_activation(project):
    cursor_rules(project)
    v = Registry().view(project)
    assert sorted(v.by_key) == [
        "cursor:always",
        "cursor:api-guidelines",
        "cursor:cursorrules",
        "cursor:frontend/styling",
        "cursor:manual",
        "cursor:react-components",
    ]
    react = v.by_key["cursor:react-components"]
    assert react.paths == ("src/components/**/*.tsx", "*.jsx") and react.flag("attach")
    assert react.description == "Standards for React components"
    assert react.body == "- Use function components."
    assert react.skill_file == project / ".cursor" / "rules" / "react-components.mdc"
    assert v.by_key["cursor:always"].flag("always_apply")
    assert v.by_key["cursor:cursorrules"].flag("always_apply")
    assert v.by_key["cursor:manual"].flag("disable_model_invocation")
    api_rule = v.by_key["cursor:api-guidelines"]
    assert not api_rule.paths and not api_rule.flag("disable_model_invocation")
    assert v.by_key["cursor:frontend/styling"].paths == ("**/*.css", "**/*.scss")
    assert v.by_key["cursor:api-guidelines"].bundle.kind == "cursor-rules"  # type: ignore[union-attr]


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
