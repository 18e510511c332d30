"""The security audit of a skill bundle before it is installed: the findings model, the rule
tables, the text rules (invisible characters, hidden instructions) and the scan itself.

``audit_bundle`` and ``audit_dir`` are importable from here, as documented.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemon_skills._lazy import lazy_getattr

if TYPE_CHECKING:
    from lemon_skills.skills.audit.scan import audit, audit_bundle, audit_dir

_API = {
    "audit": "lemon_skills.skills.audit.scan",
    "audit_bundle": "lemon_skills.skills.audit.scan",
    "audit_dir": "lemon_skills.skills.audit.scan",
}

__getattr__ = lazy_getattr(__name__, _API, globals())

__all__ = sorted(_API)
