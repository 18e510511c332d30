"""The skills ``lemon mcp serve`` publishes, in SEP-2640 form: one entry per skill, every file
with its size and sha256, built from the registry view exactly as ``lemon prompt`` sees it.

Digests and frontmatter are cached by each file's stat signature and every skill's listing
entry by its file list, so a rebuild after one edit hashes and parses one file, and a rebuild
after none builds nothing.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lemon_skills import _yaml
from lemon_skills.errors import ManifestError
from lemon_skills.skills.catalog.registry import View
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.skills.format.manifest import parse_skill
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.remote.model import ORIGINAL_NAME_KEY
from lemon_skills.skills.selection.offer import prompt_catalogue
from lemon_skills.skills.selection.profiles import Profile

#: Bounds a served skill keeps within (the extension's own server-side limits).
MAX_FILES = 512
MAX_TOTAL_BYTES = 16 * 1024 * 1024
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_WORDS = re.compile(r"[a-z0-9]+")
#: A uri host name (RFC 3986 reg-name) in the characters a folder name uses.
_HOST = re.compile(r"^[A-Za-z0-9._~-]+$")
_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv"})


@dataclass(frozen=True, slots=True)
class ServedFile:
    rel: str
    uri: str
    path: str
    digest: str
    size: int
    #: What is served when it is not the file's bytes (a SKILL.md served under another name).
    data: bytes | None = None

    @property
    def mime(self) -> str:
        if self.rel.endswith(".md"):
            return "text/markdown"
        return mimetypes.guess_type(self.rel)[0] or "application/octet-stream"


@dataclass(frozen=True, slots=True)
class ServedSkill:
    entry: Entry
    uri: str
    frontmatter: Mapping[str, Any]
    files: tuple[ServedFile, ...]
    #: The ``skills/list`` entry (built once per change of the skill's files).
    listed: Mapping[str, Any]

    def wire(self) -> dict[str, Any]:
        """The ``skills/list`` entry."""
        return dict(self.listed)


def _listed(
    uri: str, frontmatter: Mapping[str, Any], files: tuple[ServedFile, ...]
) -> dict[str, Any]:
    return {
        "uri": uri,
        "frontmatter": dict(frontmatter),
        "resources": [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in files],
    }


class Catalog:
    """Served skills by uri, rebuilt from registry views; ``generation`` says when it changed."""

    def __init__(self) -> None:
        self._digests: dict[str, tuple[tuple[int, int], str]] = {}
        self._fronts: dict[str, tuple[tuple[int, int], tuple[dict[str, Any] | None, str]]] = {}
        self._renames: dict[
            str, tuple[tuple[tuple[int, int], str], tuple[dict[str, Any], ServedFile] | None]
        ] = {}
        self._listed: dict[tuple[str, tuple[ServedFile, ...]], Mapping[str, Any]] = {}
        self.skills: dict[str, ServedSkill] = {}
        self.files: dict[str, tuple[ServedSkill, ServedFile]] = {}
        self.skipped: list[str] = []
        #: ``key: why`` of every skill served with its frontmatter re-emitted as plain YAML.
        self.normalised: list[str] = []
        self.fingerprint: str = ""
        self.generation = 0
        #: The ``skills/list`` entries, built once per generation.
        self.wire: list[dict[str, Any]] = []

    def update(self, view: View, profile: Profile | None = None) -> bool:
        """Rebuild from ``view`` (only what ``profile`` admits); return True when what is
        served changed."""
        skills: dict[str, ServedSkill] = {}
        skipped: list[str] = []
        normalised: list[str] = []
        # Skills served under their own names first: one renamed into a taken name yields.
        ordered = sorted(prompt_catalogue(view, profile), key=lambda e: not valid_name(e.name))
        for entry in ordered:
            if entry.source == "mcp":
                continue  # a skill from another server is not ours to publish
            served, why = self._serve(entry)
            if served is None:
                skipped.append(f"{entry.key}: {why}")
            elif served.uri in skills:
                skipped.append(f"{entry.key}: its name is served by another skill")
            else:
                skills[served.uri] = served
                if why:
                    normalised.append(f"{entry.key}: {why}")
        # Every listed field derives from the files (the frontmatter from SKILL.md), so their
        # uris and digests say whether anything served changed.
        fp = hashlib.sha256(
            "\n".join(f"{f.uri} {f.digest}" for s in skills.values() for f in s.files).encode()
        ).hexdigest()
        self.skipped = skipped
        self.normalised = normalised
        if fp == self.fingerprint:
            return False
        self.skills = skills
        self.wire = [dict(s.listed) for s in skills.values()]
        self._listed = {(s.uri, s.files): s.listed for s in skills.values()}
        self.files = {f.uri: (s, f) for s in skills.values() for f in s.files}
        self.fingerprint = fp
        self.generation += 1
        return True

    def renamed(self) -> list[tuple[str, str, str]]:
        """``(key, own name, served name)`` of every skill served under its folder name
        because its own name breaks the naming rules."""
        return [
            (s.entry.key, s.entry.name, str(s.frontmatter.get("name")))
            for s in self.skills.values()
            if s.frontmatter.get("name") != s.entry.name
        ]

    def by_name(self, key: str) -> ServedSkill | None:
        """The served skill of local key ``key``."""
        return next((s for s in self.skills.values() if s.entry.key == key), None)

    def _serve(self, entry: Entry) -> tuple[ServedSkill | None, str]:
        name = entry.name
        served_name = name if valid_name(name) else spec_name(entry.key)
        if served_name is None:
            return None, (
                f"its name {name!r} breaks the Agent Skills naming rules (1-64 lowercase "
                f"letters, digits and single hyphens) and its folder name {entry.key!r} "
                "gives no valid one to serve it under"
            )
        # A skill whose folder is not its name keeps the folder as a path prefix, so skills
        # of one name from different folders stay apart (the name is the last segment); a
        # skill served under its folder's name needs none.
        prefix = None if served_name != name or entry.key == name else _segment(entry.key)
        root = f"skill://{served_name}/" if prefix is None else f"skill://{prefix}/{served_name}/"
        files: list[ServedFile] = []
        total = 0
        for rel in _walk(entry.path):
            if len(files) >= MAX_FILES:
                return None, f"more than {MAX_FILES} files"
            f = self._file(entry.path, rel, root)
            if f is None:
                continue
            total += f.size
            if total > MAX_TOTAL_BYTES:
                return None, f"larger than {MAX_TOTAL_BYTES} bytes"
            files.append(f)
        main = next((f for f in files if f.rel == "SKILL.md"), None)
        if main is None:
            return None, "no SKILL.md"
        front, lenient = self._frontmatter(entry, main)
        if front is None or front.get("name") != name:
            return None, "its SKILL.md has no YAML frontmatter naming it"
        if served_name != name or lenient:
            renamed = self._renamed(entry, main, front, served_name)
            if renamed is None:
                return None, f"its SKILL.md could not be served under the name {served_name!r}"
            front, main_served = renamed
            files = [main_served if f is main else f for f in files]
        uri, served = root + "SKILL.md", tuple(files)
        listed = self._listed.get((uri, served))
        if listed is None:
            listed = _listed(uri, front, served)
        return ServedSkill(entry, uri, front, served, listed), lenient

    def _renamed(
        self, entry: Entry, main: ServedFile, front: Mapping[str, Any], served_name: str
    ) -> tuple[dict[str, Any], ServedFile] | None:
        """The frontmatter and SKILL.md of a skill served under ``served_name`` or whose
        frontmatter only lemon's lenient reading accepts: re-emitted as plain YAML, a replaced
        name kept in ``metadata`` (``ORIGINAL_NAME_KEY``), the body as it is. The listing and
        the served file carry the same frontmatter, as the extension requires; digest and size
        are those of the served bytes."""
        sig = self._digests[main.path][0]
        hit = self._renames.get(main.path)
        if hit is not None and hit[0] == (sig, served_name):
            return hit[1]
        found = _renamed_text(entry, front, served_name)
        out = None
        if found is not None:
            new_front, data = found
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            out = new_front, replace(main, digest=digest, size=len(data), data=data)
        self._renames[main.path] = ((sig, served_name), out)
        return out

    def _frontmatter(self, entry: Entry, main: ServedFile) -> tuple[dict[str, Any] | None, str]:
        """The frontmatter and, when only the lenient reading accepts it, why."""
        sig = self._digests[main.path][0]
        hit = self._fronts.get(main.path)
        if hit is None or hit[0] != sig:
            hit = (sig, _frontmatter(entry))
            self._fronts[main.path] = hit
        return hit[1]

    def _file(self, base: Path, rel: str, root: str) -> ServedFile | None:
        path = os.path.join(base, rel)
        try:
            st = os.stat(path)
        except OSError:
            return None
        sig = (st.st_mtime_ns, st.st_size)
        hit = self._digests.get(path)
        if hit is None or hit[0] != sig:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                return None
            hit = (sig, "sha256:" + hashlib.sha256(data).hexdigest())
            self._digests[path] = hit
        return ServedFile(rel, root + rel, path, hit[1], st.st_size)


def valid_name(name: str) -> bool:
    """``name`` follows the Agent Skills naming rules (what a served skill's uri ends in)."""
    return len(name) <= 64 and _NAME.match(name) is not None


def spec_name(folder: str) -> str | None:
    """The name a skill whose own name breaks the rules is served under: its folder name when
    that follows them, else the folder name lowercased with every run of other characters one
    hyphen (None when nothing is left)."""
    if valid_name(folder):
        return folder
    name = "-".join(_WORDS.findall(folder.lower()))[:64].strip("-")
    return name if name and valid_name(name) else None


def _segment(folder: str) -> str:
    """``folder`` as the first segment of a uri: as it is when it is a valid host name (the
    segment sits where a uri's authority does), else the name it gives (or a digest of it)."""
    if _HOST.match(folder):
        return folder
    return spec_name(folder) or hashlib.sha256(folder.encode()).hexdigest()[:16]


def _renamed_text(
    entry: Entry, front: Mapping[str, Any], served_name: str
) -> tuple[dict[str, Any], bytes] | None:
    try:
        split = split_frontmatter(entry.content())
    except (OSError, UnicodeDecodeError, ManifestError):
        return None
    meta = front.get("metadata")
    new_front = dict(front)
    if served_name != front["name"]:
        if meta is not None and not isinstance(meta, dict):
            return None  # nowhere to keep the skill's own name
        new_front["name"] = served_name
        new_front["metadata"] = {**(meta or {}), ORIGINAL_NAME_KEY: front["name"]}
    text = f"---\n{_yaml.safe_dump(new_front)}---\n\n{split.body}\n"
    return new_front, text.encode("utf-8")


def _frontmatter(entry: Entry) -> tuple[dict[str, Any] | None, str]:
    """The SKILL.md frontmatter verbatim (as JSON values), or as lemon's lenient reading
    takes it (an unquoted ``: `` in a value, TOML) with the reason; None when it has none."""
    why = ""
    try:
        text = entry.content()
        split = split_frontmatter(text)
        if split.format != "yaml":
            raise ValueError(f"its frontmatter is {split.format.upper()}, not YAML")
        data = _yaml.safe_load(split.frontmatter)
    except (OSError, UnicodeDecodeError, ManifestError):
        return None, ""
    except (_yaml.YAMLError, ValueError) as exc:
        why = str(exc) if isinstance(exc, ValueError) else "its YAML frontmatter is invalid"
        try:
            data = dict(parse_skill(text).manifest.raw)
        except ManifestError:
            return None, ""
        why += "; served with the frontmatter as lemon reads it, re-emitted as plain YAML"
    if not isinstance(data, dict):
        return None, ""
    # YAML dates and the like become strings, as any JSON listing would carry them.
    loaded: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return loaded, why


def _walk(skill_dir: Path) -> list[str]:
    """Regular files under the skill dir, as sorted posix paths (no symlinks, nothing hidden:
    a ``.env`` or ``.git`` is the author's, not the skill's): each folder's files, then its
    subfolders in order."""
    out: list[str] = []
    _visit(os.fspath(skill_dir), "", out)
    return out


def _visit(folder: str, prefix: str, out: list[str]) -> None:
    try:
        with os.scandir(folder) as it:
            found = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    subdirs = []
    for e in found:
        if e.is_symlink():
            continue
        if e.is_dir(follow_symlinks=False):
            if e.name not in _SKIP_DIRS and not e.name.startswith("."):
                subdirs.append(e)
        elif e.is_file(follow_symlinks=False) and not e.name.startswith("."):
            out.append(prefix + e.name)
    for d in subdirs:
        _visit(d.path, f"{prefix}{d.name}/", out)
