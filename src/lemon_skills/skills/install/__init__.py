"""Installing skills: plan (pure), review and approval, apply (staging, activation), the
lockfile, update/uninstall/verify, and the sources a bundle comes from (local, git).

The documented entry points are importable from here; each is loaded on first use, so importing
one submodule does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.skills.install.lifecycle import uninstall, update, update_all, verify
    from lemon_skills.skills.install.service import InstallResult, install, install_many

_API = {
    "InstallResult": "lemon_skills.skills.install.service",
    "install": "lemon_skills.skills.install.service",
    "install_many": "lemon_skills.skills.install.service",
    "uninstall": "lemon_skills.skills.install.lifecycle",
    "update": "lemon_skills.skills.install.lifecycle",
    "update_all": "lemon_skills.skills.install.lifecycle",
    "verify": "lemon_skills.skills.install.lifecycle",
}

__getattr__ = lazy_getattr(__name__, _API, globals())

__all__ = sorted(_API)
