"""Records of the install audit: findings, the report, structural limits, the verdict rule."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lemon_skills.text.rules import Severity

#: Bumped whenever a rule changes, so stored verdicts can be told apart.
SCANNER_VERSION = 1

Verdict = Literal["pass", "warn", "block"]
FileKind = Literal["skill", "script", "document", "asset", "binary"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditLimits:
    """Structural limits; exceeding any of them blocks the bundle."""

    max_files: int = 200
    max_total_bytes: int = 10 * 1024 * 1024
    max_file_bytes: int = 1024 * 1024
    max_asset_bytes: int = 5 * 1024 * 1024


DEFAULT_LIMITS = AuditLimits()


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditFinding:
    """One reason for concern: which rule, how bad, where, and the offending text."""

    rule: str
    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    excerpt: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditFinding:
        """Rebuild a finding stored by ``to_dict`` (in a lock record)."""
        sev = data.get("severity")
        line = data.get("line")
        return cls(
            rule=str(data.get("rule", "")),
            severity="block" if sev == "block" else "warn",
            message=str(data.get("message", "")),
            file=data.get("file") if isinstance(data.get("file"), str) else None,
            line=line if isinstance(line, int) else None,
            excerpt=str(data.get("excerpt", "")),
        )

    @property
    def fingerprint(self) -> str:
        """Identity that survives line moves (used to notice new findings on update)."""
        return f"{self.rule}|{self.file or ''}|{self.excerpt}"

    def summary(self) -> str:
        """``[block] remote-exec scripts/x.sh:3: downloads code and pipes it ...``."""
        where = f" {self.file}" + (f":{self.line}" if self.line else "") if self.file else ""
        return f"[{self.severity}] {self.rule}{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FileInfo:
    """One file of an audited bundle."""

    path: str
    size: int
    sha256: str
    kind: FileKind


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReport:
    """The verdict on one bundle, every finding, and what the bundle holds."""

    verdict: Verdict
    findings: tuple[AuditFinding, ...]
    files: tuple[FileInfo, ...] = ()
    bundle_hash: str = ""
    content_hash: str = ""
    file_hashes: Mapping[str, str] = field(default_factory=dict)
    scanner: int = SCANNER_VERSION

    @property
    def scripts(self) -> tuple[str, ...]:
        """Files an agent could execute."""
        return tuple(f.path for f in self.files if f.kind == "script")

    @property
    def blocking(self) -> tuple[AuditFinding, ...]:
        """Findings of severity block."""
        return tuple(f for f in self.findings if f.severity == "block")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (file list without contents)."""
        return {
            "verdict": self.verdict,
            "scanner": self.scanner,
            "bundle_hash": self.bundle_hash,
            "findings": [f.to_dict() for f in self.findings],
            "files": [{"path": f.path, "size": f.size, "kind": f.kind} for f in self.files],
            "scripts": list(self.scripts),
        }


def verdict_of(findings: Iterable[AuditFinding]) -> Verdict:
    """``block`` if any finding blocks, ``warn`` if there is any finding, else ``pass``."""
    severities = {f.severity for f in findings}
    return "block" if "block" in severities else "warn" if severities else "pass"
