"""Operator approvals: pending requests in SQLite that another process (or the host) decides.

A caller creates an approval (tool, action payload, rationale, run/session/agent context,
expiry) and waits; an operator resolves it with ``lemon approvals approve|deny ID`` or a host
calls :func:`approve` / :func:`deny`. Waiters poll the database cheaply (``PRAGMA data_version``
only changes when another connection commits), so no daemon is needed. The database lives at
``<agent>/approvals.db`` (mode 0600, WAL, busy timeout) and carries a schema version.

With a shared database configured (``lemon_skills.state``) the same statements run there: an
approval asked on one machine is listed and decided on any other, and a decision wakes the
waiter through LISTEN/NOTIFY. An unreachable database raises ``StateUnavailable``, so
nothing that needs an approval runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lemon_skills.approvals.records import (
    DEFAULT_EXPIRES_IN_S,
    Approval,
    ApprovalContext,
    ApprovalStatus,
)
from lemon_skills.approvals.store import ApprovalStore


def default_store() -> ApprovalStore:
    """The store under the current agent dir (resolved at each call)."""
    return ApprovalStore()


def request(
    tool: str,
    action: Mapping[str, Any],
    *,
    rationale: str,
    context: ApprovalContext | None = None,
    timeout: float = DEFAULT_EXPIRES_IN_S,
) -> Approval:
    """Ask for an approval and block until it is decided or expires; see ``ApprovalStore``."""
    return default_store().request(
        tool, action, rationale=rationale, context=context, timeout=timeout
    )


async def arequest(
    tool: str,
    action: Mapping[str, Any],
    *,
    rationale: str,
    context: ApprovalContext | None = None,
    timeout: float = DEFAULT_EXPIRES_IN_S,
) -> Approval:
    """Async :func:`request`."""
    return await default_store().arequest(
        tool, action, rationale=rationale, context=context, timeout=timeout
    )


def approve(approval_id: str, *, by: str | None = None, reason: str | None = None) -> Approval:
    """Approve a pending approval in the default store."""
    return default_store().approve(approval_id, by=by, reason=reason)


def deny(approval_id: str, *, by: str | None = None, reason: str | None = None) -> Approval:
    """Deny a pending approval in the default store."""
    return default_store().deny(approval_id, by=by, reason=reason)


def get(approval_id: str) -> Approval:
    """Look up an approval by id or unique prefix in the default store."""
    return default_store().get(approval_id)


def list_approvals(*, status: ApprovalStatus | None = "pending") -> list[Approval]:
    """Approvals in the default store (pending ones unless ``status`` says otherwise)."""
    return default_store().list(status=status)
