"""Skills inside plugin bundles: Claude Code plugins and marketplaces, Codex plugins and
marketplaces, Gemini CLI extensions.

A bundle root is a directory holding one of the manifests below. A plugin's skills are the
``<key>/SKILL.md`` folders of its ``skills/`` dir (or the dirs its manifest names); a
marketplace lists plugins by a ``source`` relative to the marketplace root. Each skill found
this way is keyed ``<plugin>:<dir>`` (the namespacing Claude Code and Codex use) and records its
bundle. Only local sources are followed, and never outside the marketplace root; a plugin
fetched from elsewhere is installed first (``lemon skill install``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemon_skills.errors import ConfigError
from lemon_skills.skills.catalog.discovery import Scan, diagnostic, file_sig, scan_dir
from lemon_skills.skills.format.model import BundleKind, SkillBundle, Source
from lemon_skills.skills.install import lockfile

#: Plugin manifests, by the host that reads them, in the order they are tried.
PLUGIN_MANIFESTS: tuple[tuple[BundleKind, str], ...] = (
    ("claude-plugin", ".claude-plugin/plugin.json"),
    ("codex-plugin", ".codex-plugin/plugin.json"),
    ("gemini-extension", "gemini-extension.json"),
)
MARKETPLACES: tuple[tuple[BundleKind, str], ...] = (
    ("claude-plugin", ".claude-plugin/marketplace.json"),
    ("codex-plugin", ".agents/plugins/marketplace.json"),
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: A manifest larger than this is not a plugin manifest.
_MAX_MANIFEST = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SkillDir:
    """A folder of ``<key>/SKILL.md`` skills that belongs to one bundle."""

    path: Path
    bundle: SkillBundle
    #: Only these skill folders (a marketplace entry that lists its skills), else all.
    only: frozenset[str] | None = None


def scan_bundles(roots: Iterable[Path], source: Source, scan: Scan) -> None:
    """Add the skills of every bundle found at ``roots`` to ``scan`` (keys prefixed)."""
    seen: set[tuple[str, frozenset[str] | None]] = set()
    for root in roots:
        for sd in find(root, scan):
            mark = (os.path.realpath(sd.path), sd.only)
            if mark in seen:  # one skills/ dir named by both a Claude and a Codex manifest
                continue
            seen.add(mark)
            _add(sd, source, scan)


def label_installed(install_dir: Path, scan: Scan) -> None:
    """Give the skills ``lemon skill install`` took from a plugin into ``install_dir`` the
    bundle their lock record names (the lock sits beside the dir; its change is watched)."""
    lock = install_dir.parent / lockfile.FILE_NAME
    sig = scan.watched[str(lock)] = file_sig(lock)
    if sig is None:
        return
    try:
        records = lockfile.records(lock)
    except ConfigError:
        return  # the installer and `verify` report a corrupt lock
    bundles = {k: b for k, r in records.items() if (b := _recorded(r.get("bundle"))) is not None}
    if not bundles:
        return
    cands = scan.candidates
    for i, cand in enumerate(cands):
        if cand.bundle is None and cand.search_dir == install_dir and cand.key in bundles:
            cands[i] = cand._replace(bundle=bundles[cand.key])


def _recorded(data: Any) -> SkillBundle | None:
    if not isinstance(data, Mapping):
        return None
    kind, name, root = data.get("kind"), data.get("name"), data.get("root")
    market = data.get("marketplace")
    if kind not in {k for k, _ in PLUGIN_MANIFESTS} or not isinstance(name, str):
        return None
    return SkillBundle(
        kind=kind,
        name=name,
        root=root if isinstance(root, str) else "",
        marketplace=market if isinstance(market, str) else None,
    )


def installed_roots(plugins_dir: Path, scan: Scan) -> list[Path]:
    """The bundle roots installed under the global ``plugins`` dir, in name order."""
    scan.watched[str(plugins_dir)] = file_sig(plugins_dir)
    try:
        children = sorted(os.scandir(plugins_dir), key=lambda d: d.name)
    except OSError:
        return []
    return [Path(c.path) for c in children if not c.name.startswith(".") and c.is_dir()]


def find(root: Path, scan: Scan) -> list[SkillDir]:
    """The skill folders of the plugin, extension or marketplace at ``root``."""
    out: list[SkillDir] = []
    for kind, rel in MARKETPLACES:
        data = _manifest(root / rel, scan)
        if data is not None:
            out.extend(_marketplace(root, kind, data, scan, root / rel))
    for kind, rel in PLUGIN_MANIFESTS:
        data = _manifest(root / rel, scan)
        if data is not None:
            out.extend(_plugin(root, kind, data, scan, root / rel))
    return out


def _plugin(
    root: Path,
    kind: BundleKind,
    data: Mapping[str, Any],
    scan: Scan,
    where: Path,
    *,
    name: str | None = None,
    marketplace: str | None = None,
) -> list[SkillDir]:
    label = name or _name(data.get("name"), root) or "plugin"
    bundle = SkillBundle(kind=kind, name=label, root=str(root), marketplace=marketplace)
    dirs = ["skills"]
    custom = data.get("skills")
    if isinstance(custom, str):
        dirs = [custom] if kind == "codex-plugin" else [*dirs, custom]
    elif isinstance(custom, list):
        dirs += [c for c in custom if isinstance(c, str)]
    out = []
    for rel in dict.fromkeys(dirs):
        path = _inside(root, rel, scan, where)
        if path is not None:
            out.append(SkillDir(path, bundle))
    return out


def _marketplace(
    root: Path, kind: BundleKind, data: Mapping[str, Any], scan: Scan, where: Path
) -> list[SkillDir]:
    market = _name(data.get("name"), root) or "marketplace"
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        scan.diagnostics.append(diagnostic(where, '"plugins" must be a list', "bundle"))
        return []
    meta = data.get("metadata")
    plugin_root = meta.get("pluginRoot") if isinstance(meta, Mapping) else None
    out: list[SkillDir] = []
    for item in plugins:
        if not isinstance(item, Mapping):
            continue
        name = _name(item.get("name"), None)
        rel = _local_source(item.get("source"), plugin_root)
        if name is None or rel is None:
            reason = f"plugin {item.get('name')!r}: not a local source; install it to use it"
            scan.diagnostics.append(diagnostic(where, reason, "bundle_remote", level="info"))
            continue
        proot = _inside(root, rel, scan, where)
        if proot is None:
            continue
        listed = item.get("skills")
        if isinstance(listed, list):
            bundle = SkillBundle(kind=kind, name=name, root=str(proot), marketplace=market)
            out.extend(_listed(proot, listed, bundle, scan, where))
            continue
        found = [
            (k, d) for k, r in PLUGIN_MANIFESTS if (d := _manifest(proot / r, scan)) is not None
        ]
        pk, pdata = found[0] if found else (kind, {})
        out.extend(_plugin(proot, pk, pdata, scan, where, name=name, marketplace=market))
    return out


def _listed(
    proot: Path, listed: list[Any], bundle: SkillBundle, scan: Scan, where: Path
) -> list[SkillDir]:
    by_parent: dict[Path, set[str]] = {}
    for rel in listed:
        if isinstance(rel, str) and (skill := _inside(proot, rel, scan, where)) is not None:
            by_parent.setdefault(skill.parent, set()).add(skill.name)
    return [SkillDir(parent, bundle, frozenset(names)) for parent, names in by_parent.items()]


def _local_source(source: Any, plugin_root: Any) -> str | None:
    if isinstance(source, Mapping):
        if source.get("source") in ("local", "path") and isinstance(source.get("path"), str):
            return str(source["path"])
        return None
    if not isinstance(source, str) or "://" in source or source.startswith("git@"):
        return None
    if not source.startswith(("./", "../", "/")) and isinstance(plugin_root, str):
        return f"{plugin_root.rstrip('/')}/{source}"
    return source


def _inside(root: Path, rel: str, scan: Scan, where: Path) -> Path | None:
    """``root/rel`` when it stays inside ``root`` (symlinks resolved), else a diagnostic."""
    path = Path(os.path.normpath(root / rel))
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root + os.sep):
        reason = f"{rel!r} points outside {root}; ignored"
        scan.diagnostics.append(diagnostic(where, reason, "bundle_escape", level="warning"))
        return None
    return path


def _manifest(path: Path, scan: Scan) -> Mapping[str, Any] | None:
    sig = file_sig(path)
    scan.watched[str(path)] = sig
    if sig is None:
        return None
    try:
        if sig[1] > _MAX_MANIFEST:
            raise ValueError(f"over {_MAX_MANIFEST} bytes")
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        scan.diagnostics.append(diagnostic(path, f"unreadable manifest: {exc}", "bundle"))
        return None
    if not isinstance(data, dict):
        scan.diagnostics.append(diagnostic(path, "manifest is not a JSON object", "bundle"))
        return None
    return data


def _name(value: Any, root: Path | None) -> str | None:
    if isinstance(value, str) and _NAME.match(value):
        return value
    return root.name if root is not None and _NAME.match(root.name) else None


def _add(sd: SkillDir, source: Source, scan: Scan) -> None:
    before = len(scan.candidates)
    scan.watched[str(sd.path)] = file_sig(sd.path)
    scan_dir(sd.path, source, scan)
    added = scan.candidates[before:]
    del scan.candidates[before:]
    prefix = sd.bundle.name + ":"
    for cand in added:
        if sd.only is None or cand.key in sd.only:
            scan.candidates.append(cand._replace(key=prefix + cand.key, bundle=sd.bundle))
