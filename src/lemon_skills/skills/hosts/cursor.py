"""Cursor rules read as skills: ``.cursor/rules/**/*.mdc`` and the legacy ``.cursorrules``.

A rule's frontmatter has three keys: ``description`` (the agent decides from it, like a
skill's), ``globs`` (attached whenever a file in play matches) and ``alwaysApply`` (always
attached). A rule with none of them is applied only when asked for by name. Cursor writes
``globs: *.ts, src/**`` unquoted, which is not valid YAML, so the frontmatter is read line by
line as Cursor itself does. ``.cursorrules`` is a whole-file rule that always applies.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lemon_skills.errors import ManifestError
from lemon_skills.skills.catalog.discovery import Candidate, Loaded, Scan, diagnostic, file_sig
from lemon_skills.skills.format import confine
from lemon_skills.skills.format.frontmatter import FieldWarning, split_frontmatter
from lemon_skills.skills.format.manifest import Manifest
from lemon_skills.skills.format.model import Entry, SkillBundle

RULES_DIR = (".cursor", "rules")
LEGACY_FILE = ".cursorrules"
SUFFIX = ".mdc"
KEY_PREFIX = "cursor:"
LEGACY_KEY = KEY_PREFIX + "cursorrules"
#: Nested rule folders deeper than this are not searched (a rules tree is shallow).
MAX_DEPTH = 4


def scan_rules(roots: list[Path], scan: Scan) -> None:
    """Add the rules under each project root to ``scan``; nearer roots first."""
    for root in roots:
        rules = root.joinpath(*RULES_DIR)
        # Watched even when missing: creating the folder or file later is then noticed.
        scan.watched[str(rules)] = file_sig(rules)
        bundle = SkillBundle(kind="cursor-rules", name="cursor", root=str(root))
        _walk(rules, rules, bundle, scan, 0)
        legacy = root / LEGACY_FILE
        sig = file_sig(legacy)
        scan.watched[str(legacy)] = sig
        if sig is not None and os.path.isfile(legacy):
            if _escapes(legacy, root, LEGACY_KEY, scan):
                continue
            real = os.path.realpath(legacy)
            scan.candidates.append(
                Candidate(LEGACY_KEY, str(root), root, "project", sig, real, str(legacy), bundle)
            )


def _walk(rules: Path, folder: Path, bundle: SkillBundle, scan: Scan, depth: int) -> None:
    try:
        children = sorted(os.scandir(folder), key=lambda d: d.name)
    except OSError:
        return
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            if depth < MAX_DEPTH:
                scan.watched[child.path] = file_sig(child.path)
                _walk(rules, Path(child.path), bundle, scan, depth + 1)
            continue
        if not child.name.endswith(SUFFIX):
            continue
        sig = file_sig(child.path)
        if sig is None or _escapes(child.path, rules, KEY_PREFIX + child.name, scan):
            continue
        rel = os.path.relpath(child.path, rules)[: -len(SUFFIX)].replace(os.sep, "/")
        real = os.path.realpath(child.path)
        scan.candidates.append(
            Candidate(
                KEY_PREFIX + rel, str(folder), rules, "project", sig, real, child.path, bundle
            )
        )
        scan.watched[child.path] = sig


def _escapes(path: str | Path, root: Path, key: str, scan: Scan) -> bool:
    """Refuse (with a diagnostic) a rule file that is a symlink resolving outside ``root``."""
    if confine.inside(path, root):
        return False
    reason = f"{confine.REFUSED} ({os.path.realpath(path)}); never read"
    scan.diagnostics.append(diagnostic(path, reason, "symlink-escape", key=key))
    return True


def load_rule(cand: Candidate) -> Loaded:
    """Read one rule file into an entry; never raises."""
    path = Path(cand.file)
    try:
        text = confine.read_text(path, cand.search_dir)
    except (OSError, UnicodeDecodeError) as exc:
        reason = f"cannot read: {exc}"
        return Loaded(None, (diagnostic(path, reason, "unreadable", key=cand.key),), cand.sig)
    warnings: list[FieldWarning] = []
    if path.name == LEGACY_FILE:
        manifest = Manifest(always_apply=True, description="Project rules (.cursorrules)")
        body = text.strip()
    else:
        manifest, body = parse_rule(text, warnings)
    diags = tuple(
        diagnostic(path, f"{w.field}: {w.message}", "field", key=cand.key, level="warning")
        for w in warnings
    )
    name = cand.key.removeprefix(KEY_PREFIX)
    entry = Entry(
        key=cand.key,
        name=name,
        description=manifest.description,
        source=cand.source,
        path=cand.path,
        manifest=manifest,
        body=body,
        search_dir=cand.search_dir,
        real_path=cand.real,
        file_sig=cand.sig,
        file=cand.file,
        bundle=cand.bundle,
    )
    return Loaded(entry, diags, cand.sig)


def parse_rule(text: str, warnings: list[FieldWarning]) -> tuple[Manifest, str]:
    """A ``.mdc`` rule's manifest and body."""
    try:
        split = split_frontmatter(text)
    except ManifestError:
        warnings.append(FieldWarning("frontmatter", "never closed; the whole file is the rule"))
        return Manifest(disable_model_invocation=True), text.strip()
    fields = _fields(split.frontmatter)
    description = " ".join(_scalar(fields.get("description")).split())
    globs = _globs(fields.get("globs"))
    always = _scalar(fields.get("alwaysApply")).lower() == "true"
    extra = {k: v for k, v in fields.items() if k not in ("description", "globs", "alwaysApply")}
    manifest = Manifest(
        description=description,
        paths=globs,
        attach=bool(globs),
        always_apply=always,
        # Cursor's "manual" rules: no description, globs or alwaysApply.
        disable_model_invocation=not (description or globs or always),
        extra=extra,
        raw=dict(fields),
    )
    return manifest, split.body


def _fields(front: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in front.split("\n"):
        if not line.strip() or line.lstrip().startswith("#") or line[:1] in " \t":
            continue
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _scalar(value: str | None) -> str:
    if not value:
        return ""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _globs(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    items: Any
    if value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            items = value.strip("[]").split(",")
    else:
        items = _scalar(value).split(",")
    if not isinstance(items, list):
        return ()
    return tuple(s for s in (_scalar(str(i).strip()) for i in items) if s)
