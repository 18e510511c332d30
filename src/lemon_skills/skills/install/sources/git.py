"""Git repositories as skill sources, fetched by the real ``git`` with a locked-down setup.

Every git call: a scrubbed environment (no inherited ``GIT_*``, no system or global config,
so no credential helpers, aliases or hook paths from the user's setup), only the
file/git/http/https/ssh transports (``ext::`` and friends can run commands), no terminal
prompts, hooks pointed at ``/dev/null``, object checks on, ``--`` before every user-supplied
argument, and a timeout.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from lemon_skills import _proc
from lemon_skills._proc import ProgressFn
from lemon_skills.errors import CommandError, SourceError
from lemon_skills.skills.install.sources.base import Fetched, SourceSpec, Trust, VersionField

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
DEFAULT_GITHUB_BASE = "https://github.com/"
DEFAULT_TIMEOUT_S = 120.0

#: Environment variables passed through to git; everything else (``GIT_DIR``!) is dropped.
_PASS_ENV = (
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "SSH_AUTH_SOCK",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.symlinks=true",  # links must stay links so the audit sees (and refuses) them
    "credential.helper=",
    "submodule.recurse=false",
    "transfer.fsckObjects=true",
    "protocol.version=2",
    "advice.detachedHead=false",
)
_SHA = re.compile(r"^[0-9a-f]{7,40}$")


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git command runs with."""
    base = os.environ if base is None else base
    env = {k: base[k] for k in _PASS_ENV if k in base}
    env.update(
        GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS,
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_SSH_COMMAND="ssh -o BatchMode=yes",
        LC_ALL="C",
    )
    return env


def git_timeout(env: Mapping[str, str] | None = None) -> float:
    """Seconds a git command may run: ``$LEMON_GIT_TIMEOUT`` or 120."""
    value = (os.environ if env is None else env).get("LEMON_GIT_TIMEOUT", "")
    try:
        return float(value) if value else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def git(
    args: Sequence[str], *, cwd: Path | None = None, progress: ProgressFn | None = None
) -> _proc.Completed:
    """Run ``git <args>`` with the locked-down configuration.

    Raises:
        CommandError: git failed or timed out.
    """
    config = [part for item in _CONFIG for part in ("-c", item)]
    return _proc.run(
        ["git", *config, *args],
        cwd=cwd,
        env=git_env(),
        timeout=git_timeout(),
        on_stderr=progress,
    )


class GitSource:
    """Shallow-clones a repository; its version is the commit the ref points at."""

    trust: Trust = "community"
    version_field: VersionField = "commit"

    def url(self, spec: SourceSpec) -> str:
        """The URL handed to git."""
        return spec.location

    def fetch(self, spec: SourceSpec, dest: Path, *, progress: ProgressFn | None) -> Fetched:
        """Clone ``spec`` into ``dest``, check out its ref and drop ``.git``.

        Raises:
            SourceError: the clone failed, the ref does not exist or the subdirectory is missing.
        """
        url = self.url(spec)
        try:
            _clone(url, dest, spec.ref, progress)
            commit = git(["rev-parse", "HEAD"], cwd=dest).stdout.strip()
        except CommandError as exc:
            raise SourceError(
                f"cannot fetch {url}" + (f" at {spec.ref}" if spec.ref else "") + f": {exc}",
                hint="check the URL and ref, and that `git ls-remote URL` works from here",
            ) from exc
        shutil.rmtree(dest / ".git")
        root = dest / spec.subdir if spec.subdir else dest
        if not root.is_dir() or root.is_symlink():
            raise SourceError(f"{url} has no directory {spec.subdir!r} at {commit[:12]}")
        return Fetched(root=root, commit=commit)

    def latest(self, spec: SourceSpec) -> str | None:
        """The commit the remote's ref (default HEAD) points at now; None for a pinned commit.

        Raises:
            SourceError: the remote cannot be reached or has no such ref.
        """
        url = self.url(spec)
        ref = spec.ref
        try:
            out = git(["ls-remote", "--", url, ref or "HEAD"]).stdout
        except CommandError as exc:
            raise SourceError(f"cannot reach {url}: {exc}") from exc
        refs: dict[str, str] = {}
        for line in out.splitlines():
            sha, _, name = line.partition("\t")
            refs[name.strip()] = sha.strip()
        wanted = (
            ["HEAD"]
            if ref is None
            else [f"refs/tags/{ref}^{{}}", f"refs/heads/{ref}", f"refs/tags/{ref}", ref]
        )
        for name in wanted:
            if name in refs:
                return refs[name]
        if ref is not None and _SHA.match(ref):
            return None
        raise SourceError(f"{url} has no ref {ref or 'HEAD'!r}")


class GitHubSource(GitSource):
    """``gh:owner/repo``: a git source on GitHub (or ``$LEMON_GITHUB_BASE``, read per call)."""

    def url(self, spec: SourceSpec) -> str:
        """``<base>/<owner>/<repo>.git``."""
        base = os.environ.get("LEMON_GITHUB_BASE") or DEFAULT_GITHUB_BASE
        if not base.startswith(("https://", "http://", "file://", "git://", "ssh://")):
            raise SourceError(f"LEMON_GITHUB_BASE={base!r} is not a git URL prefix")
        return base.rstrip("/") + "/" + spec.location + ".git"


def _clone(url: str, dest: Path, ref: str | None, progress: ProgressFn | None) -> None:
    flags = ["--progress"] if progress else ["--quiet"]
    common = ["clone", *flags, "--template=", "--no-recurse-submodules"]
    if ref is None:
        git([*common, "--depth", "1", "--", url, str(dest)], progress=progress)
        return
    try:
        git([*common, "--depth", "1", "--branch", ref, "--", url, str(dest)], progress=progress)
        return
    except CommandError:
        if not _SHA.match(ref):
            raise
    # A commit id cannot be cloned with --branch: clone the history, then detach at it.
    shutil.rmtree(dest, ignore_errors=True)
    git([*common, "--no-checkout", "--", url, str(dest)], progress=progress)
    git(["checkout", "--quiet", "--detach", f"{ref}^{{commit}}", "--"], cwd=dest)
