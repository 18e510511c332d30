"""Rules for skills an agent writes: names, SKILL.md content, supporting-file paths, the gate.

Pure checks plus the filesystem guards (symlinks, containment) that ``manage`` runs before it
touches anything. Every failure is a ``SkillWriteError`` whose message tells the model what to
change. ``gate`` is the single place that decides whether a staged skill may land.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final, Literal

from lemon_skills.errors import ManifestError, SkillWriteError
from lemon_skills.paths import is_transient_name
from lemon_skills.skills.audit.scan import audit_dir
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.skills.format.lint import lint_text
from lemon_skills.skills.format.manifest import parse_skill
from lemon_skills.text.chars import find_invisible

MAX_NAME: Final = 64
MAX_SKILL_CHARS: Final = 100_000
MAX_FILE_BYTES: Final = 1_048_576
MAX_FILE_CHARS: Final = 100_000
SUPPORT_DIRS: Final = ("assets", "references", "scripts", "templates")
SKILL_FILE: Final = "SKILL.md"

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")

GateStatus = Literal["pass", "warn", "block"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GateVerdict:
    """What the gate decided about a staged skill."""

    status: GateStatus
    findings: tuple[str, ...] = ()
    blocking: tuple[str, ...] = field(default=())
    #: The install audit's own warnings (not lint notes): what an install would ask a human about.
    audit_warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The ``audit`` summary in tool details."""
        return {
            "status": self.status,
            "findings": list(self.findings),
            "approval_required": False,
        }


def check_name(raw: Any) -> str:
    """Return the trimmed skill name or raise with what a valid name looks like.

    Raises:
        SkillWriteError: missing, blank, too long, or outside ``[a-z0-9][a-z0-9._-]*``.
    """
    if not isinstance(raw, str):
        raise SkillWriteError("missing required string parameter: name")
    name = raw.strip()
    if not name:
        raise SkillWriteError("name must be a non-empty string")
    if len(name) > MAX_NAME:
        raise SkillWriteError(f"name exceeds {MAX_NAME} characters")
    if not _NAME.fullmatch(name) or is_transient_name(name):
        raise SkillWriteError(
            f"invalid skill name '{name}': use a single folder name of lowercase letters, "
            "digits, '.', '_' or '-', starting with a letter or digit (for example 'pdf-tools')"
        )
    return name


def check_skill_md(text: str) -> list[str]:
    """Validate SKILL.md content; return non-fatal notes (e.g. a name differing from the folder).

    Raises:
        SkillWriteError: too long, no or broken frontmatter, missing name/description, no body.
    """
    if len(text) > MAX_SKILL_CHARS:
        raise SkillWriteError(f"SKILL.md content exceeds {MAX_SKILL_CHARS} characters")
    try:
        split = split_frontmatter(text)
        parsed = parse_skill(text)
    except ManifestError as exc:
        raise SkillWriteError(f"invalid frontmatter: {exc.reason}") from exc
    if split.format == "none":
        raise SkillWriteError(
            "SKILL.md must start with frontmatter: a '---' line, 'name: ...' and "
            "'description: ...', then a closing '---' line, then the instructions"
        )
    raw = parsed.manifest.raw
    for key in ("name", "description"):
        if key not in raw:
            raise SkillWriteError(f"frontmatter must include {key}")
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise SkillWriteError(f"{key} must be non-empty")
    if not parsed.body.strip():
        raise SkillWriteError("SKILL.md must include instructions after frontmatter")
    return [f"frontmatter: {w.message}" for w in parsed.warnings if w.field == "frontmatter"]


def check_supporting(text: str) -> None:
    """Enforce the size limits of a supporting file.

    Raises:
        SkillWriteError: over 1 MiB encoded or over 100,000 characters.
    """
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise SkillWriteError(f"supporting file exceeds {MAX_FILE_BYTES} bytes")
    if len(text) > MAX_FILE_CHARS:
        raise SkillWriteError(f"supporting file exceeds {MAX_FILE_CHARS} characters")


def supporting_path(raw: Any, *, allow_skill_md: bool = False) -> str:
    """Normalise ``file_path``: ``""`` (SKILL.md, only when allowed) or ``<dir>/<file...>``.

    Raises:
        SkillWriteError: absolute, containing ``..``, outside the four folders, or a bare folder.
    """
    value = "" if raw is None else str(raw).strip()
    if value in ("", SKILL_FILE) and allow_skill_md:
        return ""
    if not value:
        raise SkillWriteError("missing required string parameter: file_path")
    pure = PurePosixPath(value.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or value.startswith("~"):
        raise SkillWriteError("file_path must be relative and may not contain '..'")
    parts = [p for p in pure.parts if p != "."]
    if not parts or parts[0] not in SUPPORT_DIRS:
        hint = " (use action=edit or patch for SKILL.md)" if value == SKILL_FILE else ""
        raise SkillWriteError("file_path must be under one of: " + ", ".join(SUPPORT_DIRS) + hint)
    if len(parts) == 1:
        raise SkillWriteError(f"file_path must include a filename under {parts[0]}/")
    if any(p.startswith(".") for p in parts):
        raise SkillWriteError("file_path may not name hidden files or folders")
    return "/".join(parts)


def refuse_symlinks(skill_dir: Path, rel: str) -> None:
    """``lstat`` every component from the skill dir down to ``rel``; refuse any symlink.

    A component that does not exist yet ends the walk (it will be created as a real one).

    Raises:
        SkillWriteError: a symlink on the way, or the target escapes the skill dir.
    """
    parts = PurePosixPath(rel).parts if rel else ()
    for depth in range(len(parts) + 1):
        component = skill_dir.joinpath(*parts[:depth])
        try:
            mode = os.lstat(component).st_mode
        except FileNotFoundError:
            break
        if stat.S_ISLNK(mode):
            shown = "/".join(parts[:depth]) or str(skill_dir)
            raise SkillWriteError(
                f"refusing to write through symlink: {shown} (skills must hold real files; "
                "ask the user to replace the link with a folder, or use another folder)"
            )
    target = (skill_dir / rel).resolve() if rel else skill_dir.resolve()
    base = skill_dir.resolve()
    if target != base and base not in target.parents:
        raise SkillWriteError("file_path escapes the skill directory")


def gate(skill_dir: Path, *, name: str) -> GateVerdict:
    """Decide whether the staged skill at ``skill_dir`` may be written.

    The install audit runs over the staged bundle: its blocking findings block the write and
    its warnings are shown to the model. Agent writes are held to a stricter bar than installs
    on one point: any invisible or direction-changing character in any text file blocks,
    wherever it is. Lint errors are reported as warnings.
    """
    report = audit_dir(skill_dir, name=name)
    blocking: list[str] = [f.summary() for f in report.blocking]
    warnings: list[str] = [f.summary() for f in report.findings if f.severity != "block"]
    for rel, path in _walk(skill_dir):
        if path.is_symlink():
            blocking.append(f"{rel} is a symlink; skills may only contain regular files")
            continue
        text = _read_text(path)
        if text is None:
            continue
        blocking.extend(
            f"{rel}: invisible character {inv.describe()}" for inv in find_invisible(text)
        )
        if rel == SKILL_FILE:
            warnings.extend(
                f"{rel}: [{f.rule}] {f.message}"
                for f in lint_text(text, dir_name=name)
                if f.severity == "error" and f.rule != "invisible-unicode"
            )
    if not (skill_dir / SKILL_FILE).is_file():
        blocking.append(f"{SKILL_FILE} is missing")
    blocking = list(dict.fromkeys(blocking))
    status: GateStatus = "block" if blocking else ("warn" if warnings else "pass")
    audit_warnings = tuple(f.summary() for f in report.findings if f.severity != "block")
    return GateVerdict(
        status=status,
        findings=(*blocking, *warnings),
        blocking=tuple(blocking),
        audit_warnings=audit_warnings,
    )


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for d in list(dirnames):
            if (base / d).is_symlink():
                dirnames.remove(d)
                yield os.path.relpath(base / d, root), base / d
        for f in sorted(filenames):
            yield os.path.relpath(base / f, root), base / f


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
