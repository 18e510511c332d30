"""Approval of installs and updates: what a reviewer is shown, and the rule that decides.

The library never prompts. Callers pass ``approve=True`` (pre-approval of a clean bundle), an
``Approver`` callback (the CLI's y/N prompt, a host's approval queue) or both. The rule:

- a ``block`` verdict is refused, whatever the caller says;
- a ``warn`` verdict with findings the user has not accepted before needs an ``Approver`` (or
  the explicit ``allow_warnings=True``): ``approve=True`` alone is not enough, because the
  caller said yes before seeing the findings;
- anything else needs ``approve=True`` or an ``Approver``; without either it is refused with a
  message saying how to approve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from lemon_skills import approvals
from lemon_skills.approvals.records import Approval, ApprovalContext
from lemon_skills.errors import TrustPolicyViolation
from lemon_skills.paths import Scope
from lemon_skills.skills.audit.model import AuditFinding, FileInfo, Verdict

Operation = Literal["install", "update", "uninstall"]
#: How a change was approved; stored in the lock record.
ApprovedBy = Literal["approve-flag", "allow-warnings", "approver", "unchanged-findings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """Everything a reviewer needs to say yes or no to one change."""

    operation: Operation
    key: str
    source: str
    destination: Path
    scope: Scope
    verdict: Verdict
    findings: tuple[AuditFinding, ...] = ()
    #: Findings not accepted before (all of them on a first install).
    new_findings: tuple[AuditFinding, ...] = ()
    files: tuple[FileInfo, ...] = ()
    scripts: tuple[str, ...] = ()
    commit: str | None = None
    replaces: bool = False
    lint: tuple[str, ...] = ()

    @property
    def needs_review(self) -> bool:
        """True when there are warnings nobody has accepted yet."""
        return self.verdict == "warn" and bool(self.new_findings)

    def describe(self) -> str:
        """The multi-line summary shown before asking."""
        total = sum(f.size for f in self.files)
        at = f" @ {self.commit[:12]}" if self.commit else ""
        lines = [
            f"{self.operation} skill {self.key!r} ({self.scope})",
            f"  source:      {self.source}{at}",
            f"  destination: {self.destination}" + (" (replacing it)" if self.replaces else ""),
            f"  files:       {len(self.files)} ({total} bytes)",
        ]
        if self.scripts:
            lines.append(f"  scripts:     {', '.join(self.scripts)}")
        lines.append(f"  audit:       {self.verdict}")
        new = {f.fingerprint for f in self.new_findings}
        for f in self.findings:
            mark = " (new)" if self.operation == "update" and f.fingerprint in new else ""
            lines.append(f"    {f.summary()}{mark}")
            if f.excerpt:
                lines.append(f"        {f.excerpt}")
        lines.extend(f"  lint: {msg}" for msg in self.lint)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for approval queues)."""
        return {
            "operation": self.operation,
            "key": self.key,
            "source": self.source,
            "destination": str(self.destination),
            "scope": self.scope,
            "commit": self.commit,
            "verdict": self.verdict,
            "findings": [f.to_dict() for f in self.findings],
            "new_findings": [f.fingerprint for f in self.new_findings],
            "files": [{"path": f.path, "size": f.size, "kind": f.kind} for f in self.files],
            "scripts": list(self.scripts),
            "replaces": self.replaces,
            "lint": list(self.lint),
        }


class Approver(Protocol):
    """Decides on one change; returns True to let it happen."""

    def __call__(self, request: ApprovalRequest) -> bool: ...


def decide(
    request: ApprovalRequest,
    *,
    approve: bool,
    approver: Approver | None,
    allow_warnings: bool = False,
    required: bool = True,
) -> ApprovedBy:
    """Apply the approval rule; return how the change was approved.

    ``required=False`` (an update whose findings and scripts did not change) lets a change
    through without asking unless it has unreviewed warnings.

    Raises:
        TrustPolicyViolation: the audit blocked the bundle, the approver said no, or nothing
            approved it (the message says how to).
    """
    if request.verdict == "block":
        raise _blocked(request)
    if not required and not request.needs_review:
        return "unchanged-findings"
    if approve and (not request.needs_review or allow_warnings):
        return "allow-warnings" if request.needs_review else "approve-flag"
    if approver is not None:
        if approver(request):
            return "approver"
        raise TrustPolicyViolation(f"skill {request.operation} of {request.key!r} denied")
    if request.needs_review:
        raise TrustPolicyViolation(
            f"skill {request.key!r} has security audit warnings that need review: "
            + _top(request.new_findings),
            hint="run on a terminal to review and confirm, pass --wait-approval to queue it "
            "for `lemon approvals approve`, or pass --allow-warnings (allow_warnings=True) "
            "together with --yes to accept them",
        )
    raise TrustPolicyViolation(
        f"skill {request.operation} of {request.key!r} needs approval",
        hint="run on a terminal to review and confirm, pass --yes (approve=True), or pass "
        "--wait-approval to queue it for `lemon approvals approve`",
    )


def queued_approver(
    *,
    timeout: float,
    context: ApprovalContext | None = None,
    on_pending: Callable[[Approval], None] | None = None,
) -> Approver:
    """An ``Approver`` that records a pending approval and waits for an operator.

    The request lands in the approvals store (``lemon approvals list``) as tool
    ``skill_<operation>`` with the ``ApprovalRequest`` as its payload; another process or a host
    approves or denies it. No answer within ``timeout`` seconds counts as a denial.
    """

    def approve(request: ApprovalRequest) -> bool:
        store = approvals.default_store()
        pending = store.create(
            f"skill_{request.operation}",
            request.to_dict(),
            rationale=request.describe(),
            context=context,
            expires_in=timeout,
        )
        if on_pending is not None:
            on_pending(pending)
        return store.wait(pending.id, timeout=timeout).approved

    return approve


def _blocked(request: ApprovalRequest) -> TrustPolicyViolation:
    linked = next(
        (f for f in request.findings if f.rule == "symlink" and f.file == "SKILL.md"), None
    )
    if linked is not None:
        rest = tuple(f for f in request.findings if f is not linked)
        return TrustPolicyViolation(
            f"skill {request.key!r} refused: {linked.message}"
            + (f"; also {_top(rest)}" if rest else ""),
            hint="make SKILL.md a regular file in the skill's directory (a copy of the file "
            "the link points to)",
        )
    return TrustPolicyViolation(
        f"skill {request.key!r} blocked by the security audit: " + _top(request.findings),
        hint="a blocked bundle is never installed; remove the flagged content upstream",
    )


def _top(findings: tuple[AuditFinding, ...], n: int = 3) -> str:
    shown = "; ".join(f.summary() for f in findings[:n])
    return shown + (f" (and {len(findings) - n} more)" if len(findings) > n else "")
