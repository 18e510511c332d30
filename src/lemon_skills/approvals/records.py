"""The records of an approval: what was asked, by which run, and how it was decided."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

ApprovalStatus = Literal["pending", "approved", "denied", "expired", "cancelled", "used"]
Decision = Literal["approved", "denied"]

#: Default lifetime of a pending approval (the original's ``approval_timeout_ms``).
DEFAULT_EXPIRES_IN_S = 300.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalContext:
    """Which run, session and agent asked (shown to the operator, used to find approvals)."""

    run_id: str | None = None
    session_key: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    """One approval request and, once decided, its outcome."""

    id: str
    tool: str
    action: Mapping[str, Any]
    rationale: str
    context: ApprovalContext = field(default_factory=ApprovalContext)
    created_at: float
    expires_at: float
    status: ApprovalStatus
    decided_by: str | None = None
    decided_at: float | None = None
    reason: str | None = None

    @property
    def approved(self) -> bool:
        """True only for an operator's approval (never for expiry or cancellation)."""
        return self.status == "approved"

    @property
    def pending(self) -> bool:
        """True while nobody has decided and it has not expired or been cancelled."""
        return self.status == "pending"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (times as ISO-8601 UTC) used by ``lemon approvals --json``."""
        return {
            "id": self.id,
            "tool": self.tool,
            "action": dict(self.action),
            "rationale": self.rationale,
            "run_id": self.context.run_id,
            "session_key": self.context.session_key,
            "agent_id": self.context.agent_id,
            "created_at": _iso(self.created_at),
            "expires_at": _iso(self.expires_at),
            "status": self.status,
            "decided_by": self.decided_by,
            "decided_at": _iso(self.decided_at) if self.decided_at is not None else None,
            "reason": self.reason,
        }


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
