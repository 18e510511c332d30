"""Which project a directory is, the same on every machine: the key shared usage is filed under.

A project inside a git work tree is named by its ``origin`` remote (else its first remote),
normalised so every spelling of one repository agrees: scheme, user, password and port
dropped, the host lower-cased, ``.git`` and trailing slashes stripped
(``git@github.com:Acme/app.git`` and ``https://github.com/Acme/app`` are both
``github.com/Acme/app``). Without a remote it is named by the repository's root commit
(``commit:<sha>``), and outside git by its absolute path (``path:/srv/app``), which only
matches on machines that use the same path. A directory below the work tree's top adds its
relative path (``github.com/Acme/app//services/api``).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from lemon_skills import _proc
from lemon_skills.context import current
from lemon_skills.errors import CommandError
from lemon_skills.paths import git_root

_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


def normalise_remote(url: str) -> str:
    """One spelling of a git remote URL, without credentials."""
    text = url.strip()
    scp = _SCP.match(text)
    if "://" not in text and scp:
        host, path = scp.group(1), scp.group(2)
    elif "://" in text:
        parts = urlsplit(text)
        if parts.scheme == "file" or not parts.hostname:
            return "path:" + parts.path.rstrip("/").removesuffix(".git")
        host, path = parts.hostname, parts.path
    else:
        return "path:" + text.rstrip("/").removesuffix(".git")
    path = path.strip("/").removesuffix(".git").rstrip("/")
    return f"{host.lower()}/{path}"


def project_key(directory: Path) -> str:
    """The shared name of the project at ``directory`` (cached per process and context)."""
    where = directory.resolve()
    cache: dict[Path, str] = current().service(project_key, dict)
    found = cache.get(where)
    if found is None:
        found = cache[where] = _identify(where)
    return found


def _identify(directory: Path) -> str:
    top = git_root(directory)
    if top is None:
        return f"path:{directory}"
    name = _remote(top) or _root_commit(top) or f"path:{top}"
    below = directory.relative_to(top).as_posix()
    return name if below == "." else f"{name}//{below}"


def _git(top: Path, *args: str) -> list[str]:
    try:
        out = _proc.run(["git", "-C", str(top), *args], timeout=10).stdout
    except CommandError:
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def _remote(top: Path) -> str | None:
    remotes = _git(top, "remote")
    if not remotes:
        return None
    name = "origin" if "origin" in remotes else remotes[0]
    url = _git(top, "remote", "get-url", name)
    return normalise_remote(url[0]) if url else None


def _root_commit(top: Path) -> str | None:
    roots = sorted(_git(top, "rev-list", "--max-parents=0", "HEAD"))
    return f"commit:{roots[0]}" if roots else None
