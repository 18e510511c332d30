"""Find skill directories on disk and load them into ``Entry`` records with diagnostics.

Scanning is I/O; ``merge`` (precedence, real-path de-duplication, shadowing) is pure. One bad
SKILL.md only ever costs its own skill: every problem becomes a ``Diagnostic``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

from lemon_skills.errors import ManifestError
from lemon_skills.paths import is_transient_name
from lemon_skills.skills.format import confine, naming
from lemon_skills.skills.format.model import Diagnostic, Entry, SkillBundle, Source
from lemon_skills.skills.format.naming import has_invisible

SKILL_FILE = "SKILL.md"
_BY_NAME = attrgetter("name")
#: SKILL.md files larger than this are refused rather than read into every prompt.
MAX_SKILL_BYTES = 1024 * 1024

FileSig = tuple[int, int, int]


class Candidate(NamedTuple):
    """A directory that holds a SKILL.md, before it is parsed.

    A named tuple, not a dataclass: discovery makes one per skill on every cold start, and a
    tuple is built in a third of the time.
    """

    key: str
    #: The skill dir; a plain string when discovery made it (see ``scan_dir``).
    path: str | Path
    search_dir: Path
    source: Source
    sig: FileSig
    real: str
    #: The instructions file: ``<path>/SKILL.md``, or a Cursor rule's ``.mdc``.
    file: str
    #: The plugin, extension or rules folder it belongs to, if any.
    bundle: SkillBundle | None = None


class Loaded(NamedTuple):
    """The outcome of loading one candidate: an entry (unless fatal), its diagnostics, and the
    signature of the file as it was read.

    A named tuple for the same reason as ``Candidate``: one per skill on every cold start.
    """

    entry: Entry | None
    diagnostics: tuple[Diagnostic, ...]
    sig: FileSig


def file_sig(path: str | Path) -> FileSig | None:
    """Cheap change signature of a file or dir (follows symlinks); None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(slots=True)
class Scan:
    """What scanning search dirs found, plus the paths whose change means "scan again"."""

    candidates: list[Candidate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    watched: dict[str, FileSig | None] = field(default_factory=dict)


def scan_dir(search_dir: Path, source: Source, into: Scan | None = None) -> Scan:
    """List the skill directories directly under ``search_dir`` in key order."""
    scan = Scan() if into is None else into
    try:
        children = sorted(os.scandir(search_dir), key=_BY_NAME)
    except FileNotFoundError:
        return scan
    except OSError as exc:
        scan.diagnostics.append(
            diagnostic(search_dir, f"cannot list: {exc.strerror}", "unreadable")
        )
        return scan
    # Plain strings on this path: it runs once per skill on every cold start.
    real_dir = os.path.join(os.path.realpath(search_dir), "")
    candidates, watched = scan.candidates, scan.watched
    for child in children:
        name = child.name
        if is_transient_name(name):
            continue
        try:
            is_dir = child.is_dir()  # follows symlinks: the npm `skills` CLI installs by symlink
        except OSError:
            is_dir = False
        if not is_dir:
            if child.is_symlink() and not os.path.exists(child.path):
                reason = "broken symlink"
                scan.diagnostics.append(diagnostic(child.path, reason, "broken_symlink", key=name))
            continue
        if has_invisible(name):
            reason = f"refused: the directory name {name!r} holds control or invisible characters"
            scan.diagnostics.append(diagnostic(child.path, reason, "unsafe_key", key=ascii(name)))
            continue
        skill_file = child.path + "/" + SKILL_FILE
        try:
            st: os.stat_result | None = os.lstat(skill_file)
        except OSError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            st, problem = _follow(skill_file, child.path, name)
            if problem is not None:
                scan.diagnostics.append(problem)
                watched[skill_file] = file_sig(skill_file)
                continue
        if st is not None:
            sig = (st.st_mtime_ns, st.st_size, st.st_ino)
            real = os.path.realpath(child.path) if child.is_symlink() else real_dir + name
            candidates.append(
                Candidate(name, child.path, search_dir, source, sig, real, skill_file)
            )
            watched[skill_file] = sig
        else:
            # An empty dir may receive its SKILL.md later; its own mtime will tell.
            watched[child.path] = file_sig(child.path)
            scan.diagnostics.extend(_explain_missing(Path(child.path), name))
    return scan


def _refusal(text: str, fmt: str, name: str | None) -> tuple[str, str] | None:
    """(code, reason) when a parsed SKILL.md must not become a skill, else None."""
    if not text.strip():
        return "empty", "SKILL.md is empty; it needs name/description frontmatter"
    if fmt == "none":
        return "no_frontmatter", "no frontmatter; a skill needs name and description"
    if name and has_invisible(name):
        return "unsafe_name", f"refused: the name {name!r} holds control or invisible characters"
    return None


def _follow(
    skill_file: str, skill_dir: str, key: str
) -> tuple[os.stat_result | None, Diagnostic | None]:
    """Stat a symlinked SKILL.md, refusing a loop, a dangling link or a target outside the skill.

    The target is never read when refused: a cloned repository's ``SKILL.md -> ~/.ssh/id_rsa``
    must not reach the model.
    """
    try:
        st = os.stat(skill_file)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, diagnostic(skill_file, "symlink loop; never read", "symlink_loop", key=key)
        reason = f"broken symlink to {os.readlink(skill_file)!r}"
        return None, diagnostic(skill_file, reason, "broken_symlink", key=key)
    if not confine.inside(skill_file, skill_dir):
        reason = f"{confine.REFUSED} ({os.path.realpath(skill_file)}); never read"
        return None, diagnostic(skill_file, reason, "symlink-escape", key=key)
    return st, None


def _explain_missing(path: Path, key: str) -> list[Diagnostic]:
    if (path / "skill.md").exists():
        return [
            diagnostic(
                path / "skill.md", "named skill.md; rename it to SKILL.md", "misnamed", key=key
            )
        ]
    return []


def load_candidate(candidate: Candidate) -> Loaded:
    """Read and parse one SKILL.md; never raises."""
    skill_file = Path(candidate.file)
    key, sig = candidate.key, candidate.sig
    if sig[1] > MAX_SKILL_BYTES:
        reason = f"SKILL.md is {sig[1]} bytes, over the {MAX_SKILL_BYTES}-byte limit"
        return Loaded(None, (diagnostic(skill_file, reason, "too_large", key=key),), sig)
    try:
        raw = skill_file.read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        reason = f"cannot read: {exc.strerror}"
        return Loaded(None, (diagnostic(skill_file, reason, "unreadable", key=key),), sig)
    except UnicodeDecodeError as exc:
        reason = f"not valid UTF-8 (byte {exc.start})"
        return Loaded(None, (diagnostic(skill_file, reason, "encoding", key=key),), sig)
    from lemon_skills.skills.format.manifest import parse_skill

    try:
        parsed = parse_skill(text, path=skill_file)
    except ManifestError as exc:
        return Loaded(
            None, (diagnostic(skill_file, exc.reason, "invalid_frontmatter", key=key),), sig
        )
    m = parsed.manifest
    refused = _refusal(text, m.format, m.name)
    if refused is not None:
        return Loaded(None, (diagnostic(skill_file, refused[1], refused[0], key=key),), sig)
    diags = [
        diagnostic(skill_file, f"{w.field}: {w.message}", "field", key=key, level="warning")
        for w in parsed.warnings
    ]
    name = m.name or key
    if not m.name and skill_file.name == "SKILL.md":
        reason = f"no name in the frontmatter; shown under its folder name {key!r}"
        diags.append(diagnostic(skill_file, reason, "no_name", key=key, level="warning"))
    if naming.unsafe_reason(name) is not None and name != key:
        reason = f"name {name!r} looks like a path; the skill is shown under its key {key!r}"
        diags.append(diagnostic(skill_file, reason, "unsafe_name", key=key, level="warning"))
        name = key
    if not m.description:
        diags.append(
            diagnostic(
                skill_file,
                "no description; find_relevant cannot match it",
                "no_description",
                key=key,
                level="warning",
            )
        )
    entry = Entry(
        key=key,
        name=name,
        description=m.description,
        source=candidate.source,
        path=candidate.path,
        manifest=m,
        body=parsed.body,
        search_dir=candidate.search_dir,
        real_path=candidate.real,
        file_sig=candidate.sig,
        bundle=candidate.bundle,
    )
    return Loaded(entry, tuple(diags), sig)


@dataclass(frozen=True, slots=True)
class Merged:
    """The visible skills of a cwd after precedence, plus what was hidden and why."""

    entries: dict[str, Entry]
    diagnostics: list[Diagnostic]
    shadowed: dict[str, list[Entry]]


def merge(ordered: Iterable[Entry]) -> Merged:
    """Apply precedence to entries given in search order: first key wins, same real dir once."""
    entries: dict[str, Entry] = {}
    by_real: dict[str, Entry] = {}
    shadowed: dict[str, list[Entry]] = {}
    diags: list[Diagnostic] = []
    for entry in ordered:
        real = entry.real_path
        first = by_real.get(real)
        if first is not None:
            if first.key != entry.key:
                diags.append(
                    diagnostic(
                        entry.path,
                        f"same directory as skill {first.key!r} ({first.path}); loaded once",
                        "duplicate",
                        key=entry.key,
                        level="info",
                    )
                )
            continue
        winner = entries.get(entry.key)
        if winner is not None:
            shadowed.setdefault(entry.key, []).append(entry)
            reason = f"{entry.source} skill shadowed by {winner.source} skill at {winner.path}"
            diags.append(diagnostic(entry.path, reason, "shadowed", key=entry.key, level="warning"))
            continue
        by_real[real] = entry
        entries[entry.key] = entry
    return Merged(entries, diags, shadowed)


def diagnostic(
    path: str | Path, reason: str, code: str, *, key: str | None = None, level: str = "error"
) -> Diagnostic:
    """A diagnostic about ``path`` (the form every loader reports problems in)."""
    return Diagnostic(path=Path(path), reason=reason, code=code, key=key, level=level)  # type: ignore[arg-type]


def scan_dirs(dirs: Sequence[Path], source: Source) -> Scan:
    """Scan several search dirs of one scope, in precedence order."""
    scan = Scan()
    for d in dirs:
        scan_dir(d, source, scan)
    return scan
