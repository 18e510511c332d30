"""Where skills are installed from: parse a source string, and the fetchers for each kind.

``resolve`` turns what the user typed into a ``SourceSpec`` (pure); ``SOURCES`` maps each
kind to the object that fetches it into a staging directory and reports its upstream version.

Accepted sources::

    ./dir  /abs/dir  ~/dir            local directory (trusted)
    https://host/repo.git  http://...  git://...  ssh://...  file:///repo  git@host:repo
    git+<any of the above>            explicit git
    gh:owner/repo                     GitHub shorthand ($LEMON_GITHUB_BASE, default github.com)
    <any git source>#sub/dir          a subdirectory of the repository (or ``path=``)
"""

from __future__ import annotations

import re
from pathlib import Path

from lemon_skills.errors import SourceError
from lemon_skills.paths import home, resolve_cwd
from lemon_skills.skills.install.sources.base import (
    Fetched,
    Kind,
    Source,
    SourceSpec,
    Trust,
    VersionField,
    check_ref,
    check_subdir,
)
from lemon_skills.skills.install.sources.git import GitHubSource, GitSource
from lemon_skills.skills.install.sources.local import LocalSource

__all__ = [
    "SOURCES",
    "Fetched",
    "Kind",
    "Source",
    "SourceSpec",
    "Trust",
    "VersionField",
    "resolve",
    "source_for",
]

#: The fetcher of each source kind (an explicit table; nothing registers itself at import).
SOURCES: dict[Kind, Source] = {
    "local": LocalSource(),
    "git": GitSource(),
    "github": GitHubSource(),
}


def source_for(spec: SourceSpec) -> Source:
    """The fetcher of ``spec.kind``."""
    return SOURCES[spec.kind]


_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)[^\s]+$")
_GH = re.compile(r"^gh:([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})?)/([A-Za-z0-9._-]{1,100})$")
#: A folder or file URL copied from GitHub's web UI: ``.../OWNER/REPO/tree/REF/SUB/DIR``.
_GH_WEB = re.compile(
    r"^https://github\.com/([A-Za-z0-9-]{1,39})/([A-Za-z0-9._-]{1,100})/(tree|blob)/([^/]+)(?:/(.*))?$"
)


def resolve(
    source: str, *, ref: str | None = None, path: str | None = None, cwd: Path | None = None
) -> SourceSpec:
    """Parse ``source`` into a ``SourceSpec`` (no I/O beyond checking a local path exists).

    Raises:
        SourceError: the source is empty, starts with ``-``, uses an unsupported scheme, has a
            malformed ``gh:`` shorthand, an unsafe subdirectory or ref, or is a missing path.
    """
    text = source.strip()
    if not text:
        raise SourceError("empty skill source", hint=_HINT)
    if text.startswith("-"):
        raise SourceError(
            f"refusing source {text!r}: it starts with '-' and could be read as an option",
            hint="prefix a local path with ./",
        )
    check_ref(ref)
    spec = _parse(text, cwd)
    if ref is not None and spec.ref is not None:
        raise SourceError(f"{text!r} already names a ref ({spec.ref}); drop --ref")
    check_ref(spec.ref)
    if path is not None:
        if spec.subdir:
            raise SourceError(f"{text!r} already names a subdirectory; drop --path or the '#'")
        spec = spec.with_subdir(path)
    return _with_ref(spec.with_subdir(check_subdir(spec.subdir)), ref)


def _with_ref(spec: SourceSpec, ref: str | None) -> SourceSpec:
    if ref is None:
        return spec
    if spec.kind == "local":
        raise SourceError("--ref applies to git sources only; a local directory has no refs")
    return SourceSpec(
        raw=spec.raw, kind=spec.kind, location=spec.location, ref=ref, subdir=spec.subdir
    )


def _parse(text: str, cwd: Path | None) -> SourceSpec:
    web = _GH_WEB.match(text)
    if web:
        owner, repo, kind, ref, sub = web.groups()
        sub = (sub or "").strip("/")
        if kind == "blob":  # a link to the SKILL.md itself
            sub = sub.rpartition("/")[0]
        url = f"https://github.com/{owner}/{repo.removesuffix('.git')}.git"
        return SourceSpec(raw=text, kind="git", location=url, ref=ref, subdir=sub)
    body, _, frag = text.partition("#") if _looks_remote(text) else (text, "", "")
    if body.startswith("git+"):
        return _git(text, body[len("git+") :], frag)
    if body.startswith("gh:"):
        m = _GH.match(body)
        if not m:
            raise SourceError(f"malformed GitHub shorthand {body!r}; expected gh:OWNER/REPO")
        repo = m.group(2).removesuffix(".git")
        return SourceSpec(raw=text, kind="github", location=f"{m.group(1)}/{repo}", subdir=frag)
    if body.startswith(_SCHEMES) or _SCP_LIKE.match(body):
        return _git(text, body, frag)
    if "://" in body or "::" in body:
        raise SourceError(
            f"unsupported source {body!r}; git sources must use https, http, ssh, git or file",
            hint=_HINT,
        )
    return _local(text, cwd)


def _looks_remote(text: str) -> bool:
    return text.startswith(("git+", "gh:", *_SCHEMES)) or bool(_SCP_LIKE.match(text.split("#")[0]))


def _git(raw: str, url: str, frag: str) -> SourceSpec:
    if not (url.startswith(_SCHEMES) or _SCP_LIKE.match(url)):
        raise SourceError(
            f"unsupported git URL {url!r}; use https://, http://, ssh://, git://, file:// or "
            "user@host:path",
            hint=_HINT,
        )
    if any(c.isspace() for c in url) or url.startswith("-"):
        raise SourceError(f"refusing git URL {url!r}: it contains whitespace or starts with '-'")
    return SourceSpec(raw=raw, kind="git", location=url, subdir=frag)


def _local(text: str, cwd: Path | None) -> SourceSpec:
    base = resolve_cwd(cwd)
    p = Path(text)
    if text.startswith("~"):
        p = home() / text[1:].lstrip("/")
    full = (p if p.is_absolute() else base / p).absolute()
    if not full.is_dir():
        what = "is not a directory" if full.exists() else "does not exist"
        raise SourceError(f"local source {full} {what}", hint=_HINT)
    return SourceSpec(raw=text, kind="local", location=str(full))


_HINT = (
    "a source is a local directory, a git URL (https://, ssh://, git@host:repo, file://) or "
    "gh:OWNER/REPO, optionally followed by #SUBDIR"
)
