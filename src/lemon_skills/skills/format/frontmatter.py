"""SKILL.md frontmatter as text: cut the file into frontmatter and body, and read the
frontmatter's YAML or TOML into a mapping (``manifest`` builds the ``Manifest`` from it).

Pure functions over text; YAML that hand-written frontmatter often breaks (an unquoted ``: ``
in a description) is retried with quoted values before it is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lemon_skills.errors import ManifestError

Format = Literal["yaml", "toml", "none"]


@dataclass(frozen=True, slots=True)
class FieldWarning:
    """A frontmatter problem that did not stop the skill from loading."""

    field: str
    message: str


@dataclass(frozen=True, slots=True)
class Split:
    """A SKILL.md cut into frontmatter source text and body."""

    format: Format
    frontmatter: str
    body: str
    body_line: int


_OPEN: dict[str, Format] = {"---": "yaml", "+++": "toml"}
_CLOSE = {
    "yaml": re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M),
    "toml": re.compile(r"^\+\+\+[ \t]*$", re.M),
}


def split_frontmatter(text: str, *, path: Path | None = None) -> Split:
    """Cut ``text`` into frontmatter and body.

    The frontmatter closes at the *first* delimiter line after the opening one, so a body that
    ends with a ``---`` horizontal rule stays a body. A BOM and CRLF line endings are accepted.

    Raises:
        ManifestError: the frontmatter is opened but never closed.
    """
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    stripped = text.lstrip(" \t\n")
    lines_before = text.count("\n", 0, len(text) - len(stripped))
    nl = stripped.find("\n")
    opener = (stripped if nl < 0 else stripped[:nl]).rstrip()
    fmt = _OPEN.get(opener)
    if fmt is None:
        return Split("none", "", text.strip("\n"), 1)
    close = _CLOSE[fmt].search(stripped, nl + 1) if nl >= 0 else None
    if close is None:
        raise ManifestError(
            f"frontmatter opened with {opener!r} on line {lines_before + 1} is never closed",
            path=path,
        )
    front = stripped[nl + 1 : close.start()].removesuffix("\n")
    after = stripped[close.end() + 1 :]
    closer_line = lines_before + stripped.count("\n", 0, close.start()) + 1
    skipped = len(after) - len(after.lstrip("\n"))
    return Split(fmt, front, after.strip("\n"), closer_line + 1 + skipped)


def load_toml(source: str, path: Path | None) -> dict[str, Any]:
    import tomllib  # only for TOML frontmatter; listing cached skills never needs it

    try:
        return tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"invalid TOML frontmatter: {exc}", path=path) from exc


def load_yaml(source: str, path: Path | None, warnings: list[FieldWarning]) -> dict[str, Any]:
    plain = plain_mapping(source)
    if plain is not None:
        return plain
    from lemon_skills import _yaml  # PyYAML costs more to import than listing cached skills takes

    try:
        data = _yaml.safe_load(source)
    except _yaml.YAMLError as exc:
        # Hand-written frontmatter often has an unquoted ": " inside a description; the client
        # guide recommends retrying with quoted values before giving up on the skill.
        retried = _requote(source)
        try:
            data = _yaml.safe_load(retried) if retried != source else None
        except _yaml.YAMLError:
            data = None
        if not isinstance(data, dict):
            raise ManifestError(
                f"invalid YAML frontmatter: {_yaml_reason(exc)}", path=path
            ) from exc
        warnings.append(
            FieldWarning(
                "frontmatter", f"invalid YAML ({_yaml_reason(exc)}); read after quoting values"
            )
        )
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ManifestError(
            f"frontmatter must be a mapping of fields, got {type(data).__name__}", path=path
        )
    return {str(k): v for k, v in data.items()}


#: One ``key: value`` line whose value YAML reads as that very text: a plain scalar starting
#: with a letter and holding no ``:``, ``#`` or quote, or a quoted one with no quote or escape
#: inside. Tabs and every YAML line break other than ``\n`` are left to the YAML parser.
_PLAIN_LINE = re.compile(
    r"([A-Za-z][A-Za-z0-9_-]*):[ ]+"
    r"(?:([A-Za-z][^:#'\"\t]*?)|\"([^\"\\\t]*)\"|'([^'\t]*)')[ ]*"
)
#: Plain scalars YAML 1.1 resolves to a bool or null rather than to a string.
_NOT_STRINGS = frozenset(
    form
    for word in ("yes", "no", "true", "false", "on", "off", "null")
    for form in (word, word.capitalize(), word.upper())
)
#: What the YAML reader refuses, and the line breaks it knows besides ``\n`` (``\r``, NEL,
#: LS, PS): frontmatter holding any of them goes to the YAML parser.
_NOT_PLAIN_TEXT = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def plain_mapping(source: str) -> dict[str, Any] | None:
    """``source`` read as YAML without loading the YAML parser, when it is only ``key: value``
    lines of string scalars (blank lines aside); None when the YAML parser must read it.

    Most frontmatter is that (a name and a description), and a skill edited since the manifest
    cache was written is re-parsed on the way to a ``lemon skill find``.
    """
    if _NOT_PLAIN_TEXT.search(source):
        return None
    data: dict[str, Any] = {}
    for line in source.split("\n"):
        if not line:
            continue
        m = _PLAIN_LINE.fullmatch(line)
        if m is None:
            return None
        key, bare, double, single = m.groups()
        if key in _NOT_STRINGS or bare in _NOT_STRINGS:
            return None
        data[key] = bare if bare is not None else double if double is not None else single
    return data


_TOP_SCALAR = re.compile(r"^([A-Za-z0-9_.-]+):[ \t]+(.+?)[ \t]*$")


def _requote(source: str) -> str:
    out = []
    for line in source.split("\n"):
        m = _TOP_SCALAR.match(line)
        if m and m.group(2)[0] not in "'\"[{|>&*!#":
            value = m.group(2).replace("'", "''")
            line = f"{m.group(1)}: '{value}'"
        out.append(line)
    return "\n".join(out)


def _yaml_reason(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"{problem} at frontmatter line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)
