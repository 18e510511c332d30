"""Skills written for other hosts keep every frontmatter key lemon does not act on."""

from __future__ import annotations

import json

from lemon_skills.cli import main
from lemon_skills.skills.catalog.registry import Registry
from tests.helpers.skills import write_skill

CLAUDE_SKILL = """---
name: deploy
description: Deploy the service to staging.
allowed-tools: Bash(git:*) Read
user-invocable: false
argument-hint: "[environment]"
context: fork
model: sonnet
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{type: command, command: ./check.sh}]
released: 2026-01-31
---
Run the deploy script.
"""

EXTRA = {
    "user-invocable": False,
    "argument-hint": "[environment]",
    "context": "fork",
    "model": "sonnet",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]
    },
    "released": "2026-01-31",
}


def test_unknown_keys_are_on_the_entry_and_survive_the_manifest_cache(project, project_skills):
    write_skill(project_skills, "deploy", text=CLAUDE_SKILL)
    fresh = Registry().view(project).by_key["deploy"]
    cached = Registry().view(project).by_key["deploy"]  # a new process: from the disk cache
    for entry in (fresh, cached):
        assert dict(entry.extra) == EXTRA
        assert entry.allowed_tools == ("Bash(git:*)", "Read")
    assert cached.manifest.extra == EXTRA


def test_list_json_carries_extra_and_allowed_tools_only_when_set(capsys, project, project_skills):
    write_skill(project_skills, "deploy", text=CLAUDE_SKILL)
    write_skill(project_skills, "plain")
    assert main(["skill", "list", "--json", "--cwd", str(project)]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["deploy"]["extra"] == EXTRA
    assert rows["deploy"]["allowed_tools"] == ["Bash(git:*)", "Read"]
    assert "extra" not in rows["plain"] and "allowed_tools" not in rows["plain"]
