"""Create skills on disk for tests."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path,
    key: str,
    *,
    name: str | None = None,
    description: str | None = "A test skill.",
    body: str = "## Usage\n\nDo the thing.\n",
    extra: str = "",
    text: str | None = None,
) -> Path:
    """Write ``root/<key>/SKILL.md`` and return the skill dir.

    ``text`` replaces the whole file; otherwise YAML frontmatter is built from the arguments.
    """
    skill_dir = root / key
    skill_dir.mkdir(parents=True, exist_ok=True)
    if text is None:
        lines = ["---", f"name: {name or key}"]
        if description is not None:
            lines.append(f"description: {description}")
        if extra:
            lines.append(extra.rstrip("\n"))
        lines.append("---")
        text = "\n".join(lines) + "\n\n" + body
    (skill_dir / "SKILL.md").write_text(text, encoding="utf-8")
    return skill_dir


def project_skills(project: Path) -> Path:
    """The ``.lemon/skill`` dir of a project."""
    return project / ".lemon" / "skill"
