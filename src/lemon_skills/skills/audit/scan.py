"""The install security audit: deterministic rules over a skill bundle, no network, no LLM.

``audit_bundle`` is pure (bytes in, report out) so installs, updates and agent writes share
it; ``audit_dir`` reads a directory first. The verdict is ``block`` when any finding blocks
(a blocked bundle is never installed), ``warn`` when any finding needs a human to look
(approval is then required even from callers that pre-approve clean bundles), else ``pass``.

What is checked: remote execution (``curl | sh`` and relatives), obfuscated execution,
reverse shells, exfiltration (a secret read together with a command that sends data),
destructive commands, persistence, prompt injection in documents, hidden text (Unicode tag
characters are decoded and shown), bidi controls and other invisible characters, look-alike
names, and the bundle's structure: symlinks, special files, sizes, file count and binaries.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from lemon_skills.errors import ManifestError
from lemon_skills.skills.audit.model import (
    DEFAULT_LIMITS,
    SCANNER_VERSION,
    AuditFinding,
    AuditLimits,
    AuditReport,
    FileInfo,
    FileKind,
    Verdict,
    verdict_of,
)
from lemon_skills.skills.audit.text_rules import scan_text, visible
from lemon_skills.skills.format.bundle import (
    Bundle,
    bundle_hash,
    collect,
    content_hash,
    file_hashes,
)
from lemon_skills.skills.format.manifest import parse_skill
from lemon_skills.text.chars import find_invisible, lookalike_reason

__all__ = [
    "DEFAULT_LIMITS",
    "SCANNER_VERSION",
    "AuditFinding",
    "AuditLimits",
    "AuditReport",
    "FileInfo",
    "Verdict",
    "audit",
    "audit_bundle",
    "audit_dir",
    "classify",
    "verdict_of",
]

_SCRIPT_EXT = frozenset(
    {".sh", ".bash", ".zsh", ".fish", ".ksh", ".py", ".rb", ".pl", ".js", ".mjs", ".cjs"}
    | {".ts", ".php", ".lua", ".ps1", ".psm1", ".bat", ".cmd"}
)
_MARKDOWN_EXT = frozenset({".md", ".markdown", ".mdx", ".txt", ".rst"})
_NATIVE_MAGIC = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")


def audit_bundle(
    files: Mapping[str, bytes],
    *,
    name: str,
    symlinks: Mapping[str, str] | None = None,
    special: Collection[str] = (),
    executables: Collection[str] = (),
    overflow: str | None = None,
    limits: AuditLimits = DEFAULT_LIMITS,
) -> AuditReport:
    """Audit a bundle given as ``{relative posix path: bytes}``; pure and deterministic.

    ``name`` is the key the skill is (or will be) installed under.
    """
    hashes = file_hashes(files)
    infos = tuple(
        FileInfo(
            path=rel,
            size=len(data),
            sha256=hashes[rel],
            kind=classify(rel, data, executable=rel in executables),
        )
        for rel, data in sorted(files.items())
    )
    findings: list[AuditFinding] = []
    findings.extend(_structure(files, infos, symlinks or {}, special, overflow, limits))
    findings.extend(_names(name, files))
    for info in infos:
        data = files[info.path]
        if _is_text(data):
            markdown = (
                info.kind == "skill" or PurePosixPath(info.path).suffix.lower() in _MARKDOWN_EXT
            )
            text = data.decode("utf-8")
            findings.extend(
                scan_text(info.path, text, in_script=info.kind == "script", markdown=markdown)
            )
    return AuditReport(
        verdict=verdict_of(findings),
        findings=tuple(findings),
        files=infos,
        bundle_hash=bundle_hash(hashes),
        content_hash=content_hash(files),
        file_hashes=hashes,
    )


def audit(bundle: Bundle, *, name: str, limits: AuditLimits = DEFAULT_LIMITS) -> AuditReport:
    """Audit a collected ``Bundle``."""
    return audit_bundle(
        bundle.files,
        name=name,
        symlinks=bundle.symlinks,
        special=bundle.special,
        executables=bundle.executables,
        overflow=bundle.overflow,
        limits=limits,
    )


def audit_dir(
    path: Path, *, name: str | None = None, limits: AuditLimits = DEFAULT_LIMITS
) -> AuditReport:
    """Read a skill directory (never following symlinks) and audit it; ``name`` defaults to
    the directory name."""
    return audit(collect(path), name=name or path.name, limits=limits)


def classify(rel: str, data: bytes, *, executable: bool = False) -> FileKind:
    """What a bundle file is, for severity purposes."""
    p = PurePosixPath(rel)
    if rel == "SKILL.md":
        return "skill"
    if data.startswith(b"#!") or executable or p.suffix.lower() in _SCRIPT_EXT:
        return "script"
    if p.parts[0] == "scripts" and _is_text(data):
        return "script"
    if p.parts[0] == "assets":
        return "asset"
    return "document" if _is_text(data) else "binary"


def _is_text(data: bytes) -> bool:
    if b"\x00" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _structure(
    files: Mapping[str, bytes],
    infos: tuple[FileInfo, ...],
    symlinks: Mapping[str, str],
    special: Collection[str],
    overflow: str | None,
    limits: AuditLimits,
) -> list[AuditFinding]:
    out = [_symlink_finding(rel, target) for rel, target in sorted(symlinks.items())]
    out.extend(
        AuditFinding(rule="special-file", severity="block", file=rel, message="not a regular file")
        for rel in sorted(special)
    )
    if "SKILL.md" not in files and "SKILL.md" not in symlinks:
        out.append(AuditFinding(rule="no-skill-md", severity="block", message="no SKILL.md"))
    if overflow or len(files) > limits.max_files:
        out.append(
            AuditFinding(
                rule="too-many-files",
                severity="block",
                message=overflow or f"{len(files)} files; at most {limits.max_files}",
            )
        )
    total = sum(i.size for i in infos)
    if total > limits.max_total_bytes:
        msg = f"bundle is {total} bytes; at most {limits.max_total_bytes}"
        out.append(AuditFinding(rule="bundle-too-large", severity="block", message=msg))
    for info in infos:
        out.extend(_file_structure(info, files[info.path], limits))
    return out


def _symlink_finding(rel: str, target: str) -> AuditFinding:
    # A linked SKILL.md is the skill itself pointing elsewhere: say that, not "no SKILL.md".
    what = "SKILL.md is a symlink" if rel == "SKILL.md" else "symlink"
    return AuditFinding(
        rule="symlink",
        severity="block",
        file=rel,
        excerpt=f"{rel} -> {target}",
        message=f"{what} to {target!r}; bundles may not contain symlinks",
    )


def _file_structure(info: FileInfo, data: bytes, limits: AuditLimits) -> list[AuditFinding]:
    out = []
    cap = limits.max_asset_bytes if info.kind == "asset" else limits.max_file_bytes
    if info.size > cap:
        msg = f"{info.size} bytes; at most {cap}"
        out.append(
            AuditFinding(rule="file-too-large", severity="block", file=info.path, message=msg)
        )
    if data.startswith(_NATIVE_MAGIC) and not _is_text(data):
        out.append(
            AuditFinding(
                rule="native-binary",
                severity="block",
                file=info.path,
                message="a compiled executable; skills ship source, not binaries",
            )
        )
    elif info.kind == "binary":
        out.append(
            AuditFinding(
                rule="binary-file",
                severity="warn",
                file=info.path,
                message="binary file outside assets/; it cannot be reviewed as text",
            )
        )
    hidden = list(find_invisible(info.path, skip_leading_bom=False))
    if hidden or any(ord(c) < 32 for c in info.path):
        out.append(
            AuditFinding(
                rule="invisible-unicode",
                severity="block",
                file=visible(info.path),
                message="file name contains invisible or control characters",
            )
        )
    return out


def _names(name: str, files: Mapping[str, bytes]) -> list[AuditFinding]:
    names = {name}
    try:
        declared = parse_skill(files.get("SKILL.md", b"").decode("utf-8", "replace")).manifest.name
    except ManifestError:
        declared = None
    if declared:
        names.add(declared)
    out = []
    for n in sorted(names):
        reason = lookalike_reason(n)
        if reason:
            out.append(
                AuditFinding(
                    rule="lookalike-name",
                    severity="block",
                    file="SKILL.md",
                    excerpt=visible(n),
                    message=f"skill name {n!r} {reason}",
                )
            )
    return out
