from __future__ import annotations

from pathlib import Path

import pytest

from lemon_skills.errors import TrustPolicyViolation
from lemon_skills.skills.audit.model import AuditFinding, FileInfo
from lemon_skills.skills.install.review import ApprovalRequest, decide

WARN = AuditFinding(rule="net", severity="warn", message="calls out", file="run.sh", line=2)
BLOCK = AuditFinding(rule="remote-exec", severity="block", message="pipes to sh", file="run.sh")


def _request(verdict="pass", findings=(), new=None, operation="install"):
    return ApprovalRequest(
        operation=operation,
        key="pdf",
        source="gh:acme/pdf",
        destination=Path("/skills/pdf"),
        scope="global",
        verdict=verdict,
        findings=tuple(findings),
        new_findings=tuple(findings if new is None else new),
        files=(FileInfo(path="run.sh", size=7, sha256="h", kind="script"),),
        scripts=("run.sh",),
        commit="0123456789abcdef",
    )


def test_a_blocked_bundle_is_refused_whatever_the_caller_says():
    with pytest.raises(TrustPolicyViolation, match="blocked by the security audit"):
        decide(_request("block", [BLOCK]), approve=True, approver=lambda r: True)


def test_a_clean_bundle_needs_the_flag_or_an_approver():
    assert decide(_request(), approve=True, approver=None) == "approve-flag"
    assert decide(_request(), approve=False, approver=lambda r: True) == "approver"
    with pytest.raises(TrustPolicyViolation, match="needs approval"):
        decide(_request(), approve=False, approver=None)


def test_new_warnings_are_not_approved_by_a_blind_yes():
    warned = _request("warn", [WARN])
    assert warned.needs_review
    with pytest.raises(TrustPolicyViolation, match="warnings that need review"):
        decide(warned, approve=True, approver=None)
    assert decide(warned, approve=True, approver=None, allow_warnings=True) == "allow-warnings"
    assert decide(warned, approve=True, approver=lambda r: True) == "approver"


def test_an_approver_saying_no_denies():
    with pytest.raises(TrustPolicyViolation, match="install of 'pdf' denied"):
        decide(_request(), approve=False, approver=lambda r: False)


def test_an_unchanged_update_goes_through_without_asking():
    same = _request("warn", [WARN], new=(), operation="update")
    assert decide(same, approve=False, approver=None, required=False) == "unchanged-findings"
    changed = _request("warn", [WARN], operation="update")
    with pytest.raises(TrustPolicyViolation):
        decide(changed, approve=False, approver=None, required=False)


def test_describe_shows_source_files_scripts_and_marks_new_findings_on_update():
    text = _request("warn", [WARN, BLOCK], new=[WARN], operation="update").describe()
    assert "source:      gh:acme/pdf @ 0123456789ab" in text
    assert "files:       1 (7 bytes)" in text
    assert "scripts:     run.sh" in text
    assert "[warn] net run.sh:2: calls out (new)" in text
    assert "[block] remote-exec run.sh: pipes to sh\n" in text + "\n"


def test_the_queue_payload_names_new_findings_by_fingerprint():
    data = _request("warn", [WARN]).to_dict()
    assert data["new_findings"] == [WARN.fingerprint]
    assert data["destination"] == "/skills/pdf"
