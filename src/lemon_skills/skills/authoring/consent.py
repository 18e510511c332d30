"""Who may delete, rewrite, switch on or off, or create a skill through ``skill_manage``.

An agent may change the skills it created (provenance is recorded in the usage sidecar at
create). Any other skill (installed, hand-written, or created by an agent but since installed
over) needs an operator's approval from the approvals store; so does a new skill that would
hide one already there under the same key, or whose audit warns (a ``curl | sh`` in a global
skill reaches every project). The approval is bound to the exact request and to the skill's
content hash, so it is spent once the change lands.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from lemon_skills import approvals
from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.errors import ApprovalError, SkillWriteError
from lemon_skills.paths import Scope
from lemon_skills.skills.format.bundle import hash_dir
from lemon_skills.skills.install import lockfile
from lemon_skills.skills.usage.store import UsageStore


class Target(Protocol):
    """The skill an action writes (``authoring.ops.Target``)."""

    @property
    def scope(self) -> Scope: ...
    @property
    def cwd(self) -> Path | None: ...
    @property
    def name(self) -> str: ...
    @property
    def skill_dir(self) -> Path: ...
    @property
    def agent_id(self) -> str | None: ...
    def usage(self) -> UsageStore: ...


#: Actions that remove, rewrite, or switch on or off what is already there (``restore`` turns
#: back on a skill the user disabled; ``pin`` shields it from the user's own clean-up and
#: ``unpin`` takes that shield away, leaving the skill to the curator's archiving).
GUARDED: Final = frozenset(
    {"delete", "edit", "patch", "write_file", "remove_file", "restore", "archive", "pin", "unpin"}
)
#: The parameters that say what a change does; the approval covers exactly these.
_CHANGE_PARAMS: Final = (
    "content",
    "file_path",
    "file_content",
    "old_string",
    "new_string",
    "replace_all",
)
TOOL: Final = "skill_manage"


def agent_authored(t: Target) -> bool:
    """True when an agent created ``t``'s skill and no install has claimed the key since."""
    if t.usage().get(t.name).get("created_by") != "agent":
        return False
    return t.name not in lockfile.records(lockfile.lock_path(t.scope, t.cwd))


def authorise(t: Target, action: str, params: Mapping[str, Any]) -> None:
    """Let ``action`` proceed, or raise with a pending approval the operator can grant.

    Raises:
        SkillWriteError: the skill is not the agent's and no matching approval was granted.
    """
    if action not in GUARDED or agent_authored(t):
        return
    _require(
        t,
        _request(t, action, params),
        params,
        why=f"Skill '{t.name}' was not created by an agent, so {action} needs the user's approval",
        rationale=f"an agent asks to {action} skill {t.name!r} ({t.scope}), not one it created",
    )


def authorise_create(
    t: Target, params: Mapping[str, Any], *, shadows: Path | None, warnings: Sequence[str]
) -> None:
    """Let a create proceed, or raise with a pending approval: when the new skill would hide
    the skill at ``shadows`` (same key, lower precedence) or its audit gave ``warnings``.

    Raises:
        SkillWriteError: such a create without a matching granted approval.
    """
    reasons = []
    if shadows is not None:
        reasons.append(f"it would hide the existing skill at {shadows}")
    if warnings:
        reasons.append("its audit warns: " + "; ".join(warnings[:3]))
    if not reasons:
        return
    request = {**_request(t, "create", params), "shadows": str(shadows) if shadows else None}
    because = " and ".join(reasons)
    _require(
        t,
        request,
        params,
        why=f"creating skill '{t.name}' ({t.scope}) needs the user's approval: {because}",
        rationale=f"an agent asks to create skill {t.name!r} ({t.scope}); {because}",
    )


def _require(
    t: Target, request: dict[str, Any], params: Mapping[str, Any], *, why: str, rationale: str
) -> None:
    granted = params.get("approval_id")
    if isinstance(granted, str) and granted.strip():
        _check_granted(granted.strip(), request)
        return
    pending = approvals.default_store().create(
        TOOL, request, rationale=rationale, context=ApprovalContext(agent_id=t.agent_id)
    )
    raise SkillWriteError(
        f"{why}; approval {pending.id} is pending; nothing was changed",
        hint=f"ask the user to run `lemon approvals approve {pending.id}`, then call again with "
        f"the same parameters and approval_id={pending.id}",
    )


def _request(t: Target, action: str, params: Mapping[str, Any]) -> dict[str, Any]:
    change = {k: params.get(k) for k in _CHANGE_PARAMS if params.get(k) is not None}
    digest = hashlib.sha256(json.dumps(change, sort_keys=True).encode("utf-8")).hexdigest()
    return {
        "action": action,
        "name": t.name,
        "scope": t.scope,
        "path": str(t.skill_dir),
        "change_sha256": digest,
        "skill_hash": hash_dir(t.skill_dir) if t.skill_dir.is_dir() else None,
    }


def _check_granted(approval_id: str, request: Mapping[str, Any]) -> None:
    try:
        granted = approvals.default_store().get(approval_id)
    except ApprovalError as exc:
        raise SkillWriteError(f"approval {approval_id}: {exc}") from None
    if granted.tool != TOOL or dict(granted.action) != dict(request):
        raise SkillWriteError(
            f"approval {approval_id} was given for another change (or the skill changed since)",
            hint="call again without approval_id to ask for a new approval",
        )
    if not granted.approved:
        raise SkillWriteError(
            f"approval {approval_id} is {granted.status}, not approved",
            hint=f"the user approves it with `lemon approvals approve {approval_id}`",
        )
