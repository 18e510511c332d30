"""Cursor rules (``.cursor/rules/**/*.mdc``, ``.cursorrules``) read as skills, with the
activation Cursor gives them."""

from __future__ import annotations

from pathlib import Path

from lemon_skills.skills.catalog.registry import Registry

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
