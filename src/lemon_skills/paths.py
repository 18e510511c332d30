"""Every location lemon-skills reads or writes, resolved at call time from the environment.

Nothing here is computed at import, so changing ``LEMON_AGENT_DIR`` or ``HOME`` between calls
(as tests and multi-tenant hosts do) takes effect immediately.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

Scope = Literal["global", "project"]
#: What every public function accepts as ``cwd``.
PathArg = str | os.PathLike[str] | None

#: Directory names under a scope root that hold install transients; never skills.
STAGING_MARKERS = (".staging-", ".backup-", ".lemon-tmp-")
#: Where a project keeps skills, relative to the project (or an ancestor up to its git root).
PROJECT_SKILL_ROOT = Path(".lemon", "skill")
HARNESS_SKILL_ROOT = Path(".agents", "skills")


def home(env: Mapping[str, str] | None = None) -> Path:
    """Return the user's home directory (``$HOME`` first, so tests can redirect it)."""
    env = os.environ if env is None else env
    value = env.get("HOME")
    return Path(value) if value else Path.home()


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the agent directory: ``$LEMON_AGENT_DIR``, else ``~/.lemon/agent``."""
    env = os.environ if env is None else env
    value = env.get("LEMON_AGENT_DIR")
    if value:
        return Path(value).expanduser().absolute()
    return home(env) / ".lemon" / "agent"


def harness_skills_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the cross-client global skills dir (``~/.agents/skills``)."""
    env = os.environ if env is None else env
    value = env.get("LEMON_HARNESS_SKILLS_DIR")
    if value:
        return Path(value).expanduser().absolute()
    return home(env) / HARNESS_SKILL_ROOT


def global_skill_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """Global search dirs in precedence order (first one holding a key wins)."""
    return _dedupe([agent_dir(env) / "skill", harness_skills_dir(env)])


def git_root(start: Path) -> Path | None:
    """Return the nearest ancestor of ``start`` (inclusive) holding a ``.git`` dir or file."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_skill_dirs(cwd: Path) -> list[Path]:
    """Project search dirs in precedence order.

    ``<cwd>/.lemon/skill`` first, then ``.agents/skills`` in ``cwd`` and each parent up to the git
    root. Outside a git repository only ``cwd`` itself is searched, so a project never picks up
    ``~/.agents/skills`` (a global dir) by walking up into the home directory.
    """
    cwd = cwd.absolute()
    dirs = [cwd / PROJECT_SKILL_ROOT]
    root = git_root(cwd)
    ancestors = (
        [cwd] if root is None else [cwd, *cwd.parents[: len(cwd.parents) - len(root.parents)]]
    )
    dirs.extend(a / HARNESS_SKILL_ROOT for a in ancestors)
    return _dedupe(dirs)


def scope_root(scope: Scope, cwd: Path | None = None) -> Path:
    """Return the directory holding a scope's state files (agent dir or ``<cwd>/.lemon``)."""
    if scope == "global":
        return agent_dir()
    return resolve_cwd(cwd) / ".lemon"


def scope_skill_dir(scope: Scope, cwd: Path | None = None) -> Path:
    """Return the directory new skills of a scope are written to."""
    return scope_root(scope, cwd) / "skill"


def explicit_scope(global_: bool | None, scope: Scope | None) -> Scope | None:
    """The scope named by the facade's ``global_``/``scope`` keywords, or None when neither is."""
    if scope is not None:
        return scope
    if global_ is None:
        return None
    return "global" if global_ else "project"


def resolve_cwd(cwd: PathArg) -> Path:
    """Return ``cwd`` as an absolute path, defaulting to the process working directory."""
    return Path(cwd).expanduser().absolute() if cwd is not None else Path.cwd()


def is_transient_name(name: str) -> bool:
    """Return True for hidden entries and install staging/backup dirs."""
    if "." not in name:  # every marker has a dot; discovery asks this for every skill dir
        return False
    return name.startswith(".") or any(marker in name for marker in STAGING_MARKERS)


def _dedupe(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out: list[Path] = []
    for p in paths:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out
