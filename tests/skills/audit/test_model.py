from __future__ import annotations

from lemon_skills.skills.audit.model import AuditFinding, AuditReport, FileInfo, verdict_of

WARN = AuditFinding(rule="net", severity="warn", message="calls out", file="run.sh", line=3)
BLOCK = AuditFinding(rule="remote-exec", severity="block", message="pipes to sh", excerpt="| sh")


def test_verdict_is_the_worst_severity():
    assert verdict_of([]) == "pass"
    assert verdict_of([WARN]) == "warn"
    assert verdict_of([WARN, BLOCK]) == "block"


def test_finding_survives_the_lock_round_trip():
    assert AuditFinding.from_dict(WARN.to_dict()) == WARN


def test_a_hand_edited_finding_is_read_defensively():
    finding = AuditFinding.from_dict({"severity": "fatal", "file": 3, "line": "7", "rule": "r"})
    assert (finding.severity, finding.file, finding.line, finding.rule) == ("warn", None, None, "r")


def test_fingerprint_ignores_the_line():
    moved = AuditFinding(rule="net", severity="warn", message="other words", file="run.sh", line=90)
    assert moved.fingerprint == WARN.fingerprint
    assert BLOCK.fingerprint != WARN.fingerprint


def test_summary_names_severity_rule_and_place():
    assert WARN.summary() == "[warn] net run.sh:3: calls out"
    assert BLOCK.summary() == "[block] remote-exec: pipes to sh"


def test_report_lists_scripts_and_blocking_findings():
    files = (
        FileInfo(path="SKILL.md", size=10, sha256="a", kind="skill"),
        FileInfo(path="run.sh", size=5, sha256="b", kind="script"),
    )
    report = AuditReport(verdict="block", findings=(WARN, BLOCK), files=files)
    assert report.scripts == ("run.sh",)
    assert report.blocking == (BLOCK,)
    data = report.to_dict()
    assert data["scripts"] == ["run.sh"]
    assert data["files"][1] == {"path": "run.sh", "size": 5, "kind": "script"}
