"""Shared pieces of the install tests."""

from __future__ import annotations

import json
from pathlib import Path

from lemon_skills.skills.install.review import ApprovalRequest
from tests.helpers.git import skill_md


def local_skill(
    tmp_path: Path, name: str = "pdf-tools", files: dict[str, str] | None = None
) -> Path:
    """A skill directory to install from, with extra ``files``."""
    src = tmp_path / "src" / name
    src.mkdir(parents=True)
    (src / "SKILL.md").write_text(skill_md(name))
    for rel, text in (files or {}).items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    return src


def read_lock(agent_dir: Path) -> dict:
    """The global lockfile as JSON."""
    return json.loads((agent_dir / "skills.lock.json").read_text())


def tree(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under root with its inode, mtime and content (to prove nothing changed)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_ino, st.st_mtime_ns, p.read_bytes())
    return out


def leftovers(skill_root: Path) -> list[str]:
    return (
        [p.name for p in skill_root.iterdir() if p.name.startswith(".")]
        if skill_root.exists()
        else []
    )


class Recorder:
    """An approver that records what it was shown and answers ``answer``."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return self.answer
