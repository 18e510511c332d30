"""``lemon skill lint``: the Agent Skills specification rules, strictly, plus lemon's own.

Spec rules follow the reference validator (skills-ref): YAML frontmatter first, ``name`` 1-64
lowercase letters/digits/hyphens matching the directory, ``description`` 1-1024, ``compatibility``
up to 500, ``metadata`` a string map, no unknown top-level fields. Fields lemon understands but
the spec does not are warnings (errors with ``strict``). Every finding is collected; linting
never stops at the first.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

from lemon_skills.errors import ManifestError
from lemon_skills.paths import HARNESS_SKILL_ROOT, PROJECT_SKILL_ROOT, is_transient_name
from lemon_skills.skills.catalog.discovery import SKILL_FILE
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.skills.format.manifest import HOST_FIELDS, LEMON_FIELDS, SPEC_FIELDS, parse_skill
from lemon_skills.text.chars import find_invisible, lookalike_reason

Severity = Literal["error", "warning", "info"]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_LINES = 500
#: The hidden dirs lint enters, each only for the skill root under it.
_HIDDEN_ROOTS = {r.parts[0]: r for r in (PROJECT_SKILL_ROOT, HARNESS_SKILL_ROOT)}


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint result: rule id, severity, message and, when known, the line."""

    rule: str
    severity: Severity
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True)
class LintReport:
    """All findings for one SKILL.md."""

    path: Path
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> list[Finding]:
        """Findings of severity error."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "path": str(self.path),
            "ok": self.ok,
            "findings": [f.to_dict() for f in self.findings],
        }


def skill_files(paths: Iterable[Path]) -> list[Path]:
    """Expand arguments: a SKILL.md, a skill dir, or any dir holding skill dirs at any depth.

    A missing path is kept, so its report says so.
    """
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(_skills_under(p))
        else:
            out.append(p)
    return out


def _skills_under(folder: Path) -> Iterator[Path]:
    """SKILL.md files at or below ``folder`` in name order, entering hidden dirs as discovery does.

    Hidden and install-staging dirs are skipped (version control, virtualenvs, caches), except
    the project skill roots ``.lemon/skill`` and ``.agents/skills``. A skill dir ends the descent:
    skills do not nest. Symlinked dirs count as skills but are not walked, so a link loop ends.
    """
    if (folder / SKILL_FILE).is_file():
        yield folder / SKILL_FILE
        return
    try:
        children = sorted(os.scandir(folder), key=attrgetter("name"))
    except OSError:
        return
    for child in children:
        path = Path(child.path)
        if is_transient_name(child.name):
            root = _HIDDEN_ROOTS.get(child.name)
            if root is not None:
                yield from _skills_in_root(folder / root)
        elif (path / SKILL_FILE).is_file():
            yield path / SKILL_FILE
        elif _is_real_dir(child):
            yield from _skills_under(path)


def _skills_in_root(root: Path) -> Iterator[Path]:
    """The skill dirs directly under a skill root, as discovery lists them."""
    try:
        children = sorted(os.scandir(root), key=attrgetter("name"))
    except OSError:
        return
    for child in children:
        skill_file = Path(child.path, SKILL_FILE)
        if not is_transient_name(child.name) and skill_file.is_file():
            yield skill_file


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def lint_file(path: Path, *, strict: bool = False) -> LintReport:
    """Lint one SKILL.md on disk."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return LintReport(path, (Finding("file-missing", "error", "no such file"),))
    except UnicodeDecodeError as exc:
        return LintReport(
            path, (Finding("encoding", "error", f"not valid UTF-8 (byte {exc.start})"),)
        )
    except OSError as exc:
        return LintReport(path, (Finding("file-unreadable", "error", str(exc.strerror)),))
    return LintReport(path, tuple(lint_text(text, dir_name=path.parent.name, strict=strict)))


def lint_text(text: str, *, dir_name: str | None, strict: bool = False) -> list[Finding]:
    """Lint SKILL.md text; ``dir_name`` is the directory the file sits in (the skill key)."""
    findings: list[Finding] = []
    if text.startswith("\ufeff"):
        findings.append(
            Finding("bom", "warning", "starts with a UTF-8 BOM; the spec's validator rejects it")
        )
    findings.extend(
        Finding("invisible-unicode", "error", f"invisible character {inv.describe()}", inv.line)
        for inv in find_invisible(text)
    )
    try:
        split = split_frontmatter(text)
        parsed = parse_skill(text)
    except ManifestError as exc:
        findings.append(Finding("frontmatter-invalid", "error", exc.reason))
        return findings
    if split.format == "none":
        findings.append(
            Finding(
                "frontmatter-missing", "error", "must start with YAML frontmatter between --- lines"
            )
        )
        return findings
    if split.format == "toml":
        findings.append(
            Finding(
                "frontmatter-toml",
                "error" if strict else "warning",
                "TOML (+++) frontmatter is a lemon extension; the spec requires YAML",
            )
        )
    findings.extend(
        Finding("frontmatter-yaml", "error", w.message)
        for w in parsed.warnings
        if w.field == "frontmatter"
    )
    findings.extend(_duplicate_keys(split.frontmatter))
    raw = parsed.manifest.raw
    findings.extend(_name_rules(raw.get("name"), dir_name))
    findings.extend(_description_rules(raw.get("description")))
    findings.extend(_optional_rules(raw))
    findings.extend(_unknown_fields(raw, strict))
    findings.extend(
        Finding("field-shape", "warning", f"{w.field}: {w.message}")
        for w in parsed.warnings
        if w.field != "frontmatter"
    )
    body = parsed.body.strip()
    if not body:
        findings.append(
            Finding(
                "body-empty", "warning", "no instructions after the frontmatter", parsed.body_line
            )
        )
    elif body.count("\n") + 1 > MAX_BODY_LINES:
        findings.append(
            Finding(
                "body-long",
                "warning",
                f"body is over {MAX_BODY_LINES} lines; move detail into references/",
            )
        )
    return findings


def _name_rules(name: Any, dir_name: str | None) -> list[Finding]:
    if name is None or (isinstance(name, str) and not name.strip()):
        return [Finding("name-missing", "error", "name is required")]
    if not isinstance(name, str):
        return [Finding("name-type", "error", f"name must be a string, got {type(name).__name__}")]
    out = []
    norm = unicodedata.normalize("NFKC", name)
    if len(norm) > MAX_NAME:
        out.append(
            Finding("name-length", "error", f"name is {len(norm)} characters; at most {MAX_NAME}")
        )
    if norm != norm.lower():
        out.append(Finding("name-case", "error", "name must be lowercase"))
    if norm.startswith("-") or norm.endswith("-"):
        out.append(Finding("name-hyphen", "error", "name must not start or end with a hyphen"))
    if "--" in norm:
        out.append(Finding("name-hyphen", "error", "name must not contain consecutive hyphens"))
    bad = sorted({c for c in norm if not (c.isalnum() or c == "-")})
    if bad:
        out.append(
            Finding(
                "name-chars",
                "error",
                f"name may contain only letters, digits and hyphens, not {''.join(bad)!r}",
            )
        )
    reason = lookalike_reason(name)
    if reason:
        out.append(Finding("name-lookalike", "error", f"name {reason}"))
    if dir_name is not None and unicodedata.normalize("NFKC", dir_name) != norm:
        out.append(
            Finding(
                "name-dir-mismatch", "error", f"name {name!r} must match its directory {dir_name!r}"
            )
        )
    return out


def _description_rules(desc: Any) -> list[Finding]:
    if desc is None or (isinstance(desc, str) and not desc.strip()):
        return [Finding("description-missing", "error", "description is required")]
    if not isinstance(desc, str):
        return [Finding("description-type", "error", "description must be a string")]
    if len(desc) > MAX_DESCRIPTION:
        return [
            Finding(
                "description-length",
                "error",
                f"description is {len(desc)} characters; at most {MAX_DESCRIPTION}",
            )
        ]
    if len(desc.split()) < 4:
        return [
            Finding(
                "description-vague",
                "warning",
                "description is very short; say what the "
                "skill does and when to use it so requests can match it",
            )
        ]
    return []


def _optional_rules(raw: Any) -> list[Finding]:
    out = []
    comp = raw.get("compatibility")
    if comp is not None and (not isinstance(comp, str) or not 1 <= len(comp) <= MAX_COMPATIBILITY):
        out.append(
            Finding(
                "compatibility",
                "error",
                f"compatibility must be a string of 1-{MAX_COMPATIBILITY} characters",
            )
        )
    meta = raw.get("metadata")
    if meta is not None:
        if not isinstance(meta, dict):
            out.append(Finding("metadata-type", "error", "metadata must be a mapping"))
        elif any(not isinstance(v, str) for v in meta.values()):
            out.append(
                Finding(
                    "metadata-values",
                    "warning",
                    "the spec wants string metadata "
                    "values; nested values are stringified by other clients",
                )
            )
    tools = raw.get("allowed-tools")
    if tools is not None and not isinstance(tools, str):
        out.append(
            Finding("allowed-tools", "error", "allowed-tools must be a space-separated string")
        )
    lic = raw.get("license")
    if lic is not None and not isinstance(lic, str):
        out.append(Finding("license", "error", "license must be a string"))
    return out


def _unknown_fields(raw: Any, strict: bool) -> list[Finding]:
    """Keys beyond the spec. Other hosts' keys (and any other) are kept on the entry, so they
    are information; only ``strict`` (the spec's own validator) makes them errors."""
    out = []
    for key in raw:
        if key in SPEC_FIELDS:
            continue
        if key in LEMON_FIELDS:
            out.append(
                Finding(
                    "extension-field",
                    "error" if strict else "warning",
                    f"{key!r} is a lemon field, not in the Agent Skills spec; other "
                    "clients may reject it (move it under metadata for portability)",
                )
            )
        else:
            where = "a field of other hosts" if key in HOST_FIELDS else "not a field lemon uses"
            out.append(
                Finding(
                    "unknown-field",
                    "error" if strict else "info",
                    f"{key!r} is {where}; kept as written (Entry.extra, --json) and not "
                    "in the Agent Skills spec",
                )
            )
    return out


_TOP_KEY = re.compile(r"^([^\s#:'\"][^:]*?|'[^']*'|\"[^\"]*\"):(?:\s|$)")


def _duplicate_keys(front: str) -> list[Finding]:
    """PyYAML keeps the last of duplicate keys silently; the spec's validator rejects them."""
    seen: dict[str, int] = {}
    out = []
    for lineno, line in enumerate(front.split("\n"), start=2):
        m = _TOP_KEY.match(line)
        if not m:
            continue
        key = m.group(1).strip("'\"")
        if key in seen:
            out.append(
                Finding(
                    "duplicate-key",
                    "error",
                    f"field {key!r} appears twice (first on line {seen[key]})",
                    lineno,
                )
            )
        else:
            seen[key] = lineno
    return out
