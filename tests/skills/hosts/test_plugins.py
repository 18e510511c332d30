"""Claude Code, Codex and Gemini CLI plugin bundles and marketplaces, laid out as each host
documents them: in the project, under the global plugins dir, and installed from a directory."""

from __future__ import annotations

import json
from pathlib import Path

from lemon_skills.cli import main
from lemon_skills.skills.catalog.registry import Registry
from lemon_skills.skills.install.service import install_many
from tests.helpers.hosts import claude_plugin, write_json
from tests.helpers.skills import write_skill


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
    write_json(
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
    write_json(
        project / ".codex-plugin" / "plugin.json",
        {
            "name": "agent-skills",
            "version": "1.0.0",
            "description": "Engineering skills",
            "skills": "./skills/",
            "interface": {"displayName": "Agent Skills", "category": "Productivity"},
        },
    )
    write_json(
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
    write_json(
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


def codex_plugin(root: Path, name: str) -> Path:
    """A Codex plugin: manifest in .codex-plugin/, skills in the dir its ``skills`` names."""
    write_json(
        root / ".codex-plugin" / "plugin.json",
        {"name": name, "version": "0.1.0", "description": "Release helpers", "skills": "./skills/"},
    )
    write_skill(root / "skills", "release-notes", description="Write release notes.")
    return root


def test_plugins_installed_from_a_directory_keep_their_bundle(tmp_path, project, capsys):
    install_many(str(claude_plugin(tmp_path / "claude")), all_=True, approve=True)
    assert main(["skill", "list", "--by-bundle", "--cwd", str(project)]) == 0
    assert "commit-tools (claude-plugin)  conventional-commits" in capsys.readouterr().out
    install_many(str(codex_plugin(tmp_path / "codex", "ship")), all_=True, approve=True)
    assert main(["skill", "list", "--by-bundle", "--cwd", str(project)]) == 0
    rows = [line.split()[:3] for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [
        ["commit-tools", "(claude-plugin)", "conventional-commits"],
        ["ship", "(codex-plugin)", "release-notes"],
    ]
    assert main(["skill", "list", "--json", "--cwd", str(project)]) == 0
    bundles = {r["key"]: r["bundle"] for r in json.loads(capsys.readouterr().out)}
    assert bundles["release-notes"] == {
        "kind": "codex-plugin",
        "name": "ship",
        "root": ".",  # the plugin's folder inside the source the lock names
        "marketplace": None,
    }
