"""Skills other hosts ship in their own layouts: plugin bundles (Claude Code, Codex, Gemini CLI)
and Cursor rules, found next to the plain skill dirs of each scope.

Project scope: the project as a plugin, extension or marketplace (its manifest in the project
directory or at the git root), and the Cursor rules of the project directory and each parent up
to the git root. Global scope: every plugin, extension or marketplace installed under
``<agent dir>/plugins/``. Skills installed from a plugin keep the bundle their lock record
names. The paths whose change means "look again" go into the scan's
``watched`` map, so noticing a new plugin costs nothing on a warm call.
"""

from __future__ import annotations

from pathlib import Path

from lemon_skills.paths import agent_dir, git_root
from lemon_skills.skills.catalog.discovery import Candidate, Loaded, Scan
from lemon_skills.skills.format.model import Source
from lemon_skills.skills.hosts import cursor, plugins

#: Where installed plugins live, under the global agent dir.
PLUGINS_DIR = "plugins"


def scan(source: Source, dirs: tuple[Path, ...], into: Scan) -> None:
    """Add the bundled skills and rules of one scope (given by its skill dirs) to ``into``."""
    if dirs:
        # The first dir is where `lemon skill install` puts a scope's skills.
        plugins.label_installed(dirs[0], into)
    if source == "global":
        roots = plugins.installed_roots(agent_dir() / PLUGINS_DIR, into)
        plugins.scan_bundles(roots, "global", into)
        return
    if not dirs:
        return
    roots = project_roots(dirs[0].parent.parent)
    plugins.scan_bundles(dict.fromkeys((roots[0], roots[-1])), "project", into)
    cursor.scan_rules(roots, into)


def project_roots(cwd: Path) -> list[Path]:
    """``cwd`` and each parent up to the git root (only ``cwd`` outside a repository)."""
    root = git_root(cwd)
    if root is None:
        return [cwd]
    return [cwd, *cwd.parents[: len(cwd.parents) - len(root.parents)]]


def load(cand: Candidate) -> Loaded:
    """Load a candidate whose instructions are not a SKILL.md (a Cursor rule)."""
    return cursor.load_rule(cand)
