from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lemon_skills.errors import InstallError, SourceError
from lemon_skills.skills.audit.model import AuditFinding, AuditReport, FileInfo
from lemon_skills.skills.format.model import SkillBundle
from lemon_skills.skills.install import plan
from lemon_skills.skills.install.sources import SourceSpec

SPEC = SourceSpec(raw="gh:acme/tools", kind="github", location="https://x/acme/tools.git")
ROOT_SKILL = plan.Found(rel="", dir_name="tools.git-checkout")
PDF = plan.Found(rel="skills/pdf", dir_name="pdf", declared="PDF Tools")
CSV = plan.Found(rel="skills/csv", dir_name="csv")
PLUGIN = SkillBundle(kind="claude-plugin", name="office", root="/r")
DOCX = plan.Found(rel="plugins/office/skills/docx", dir_name="docx", bundle=PLUGIN)
XLSX = plan.Found(rel="plugins/office/skills/xlsx", dir_name="xlsx", bundle=PLUGIN)


def test_a_source_with_one_skill_needs_no_choice():
    assert plan.choose([PDF], wanted=[], all_=False, source="s") == [PDF]


def test_several_skills_need_skill_or_all():
    with pytest.raises(SourceError, match="holds 2 skills: skills/pdf, skills/csv"):
        plan.choose([PDF, CSV], wanted=[], all_=False, source="s")
    assert plan.choose([PDF, CSV], wanted=[], all_=True, source="s") == [PDF, CSV]


def test_wanted_matches_path_dir_or_declared_name_once_each():
    chosen = plan.choose(
        [PDF, CSV], wanted=["PDF Tools", "csv", "skills/pdf"], all_=False, source="s"
    )
    assert chosen == [PDF, CSV]


def test_plugin_star_takes_every_skill_of_the_plugin():
    assert plan.choose([PDF, DOCX, XLSX], wanted=["office:*"], all_=False, source="s") == [
        DOCX,
        XLSX,
    ]
    assert plan.choose([PDF, DOCX, XLSX], wanted=["office:xlsx"], all_=False, source="s") == [XLSX]


def test_missing_wanted_or_empty_source_is_a_source_error():
    with pytest.raises(SourceError, match="no skill named 'nope'; it holds: skills/pdf"):
        plan.choose([PDF], wanted=["nope"], all_=False, source="s")
    with pytest.raises(SourceError, match="no SKILL.md found in s"):
        plan.choose([], wanted=[], all_=True, source="s")


def test_key_prefers_name_then_declared_then_dir_then_repository():
    assert plan.key_for(PDF, SPEC, name="My Pdf") == "my-pdf"
    assert plan.key_for(PDF, SPEC) == "pdf-tools"
    assert plan.key_for(CSV, SPEC) == "csv"
    assert plan.key_for(ROOT_SKILL, SPEC) == "tools"


def test_plan_places_each_skill_and_narrows_the_source(tmp_path):
    spec = SourceSpec(raw="r", kind="git", location="https://x/r.git", subdir="base")
    [p] = plan.plan_install(
        [CSV], spec=spec, scope="global", skill_root=tmp_path, existing=(), force=False
    )
    assert (p.key, p.destination, p.spec.subdir, p.replaces) == (
        "csv",
        tmp_path / "csv",
        "base/skills/csv",
        False,
    )


def test_plan_refuses_taken_keys_without_force_and_marks_replacement_with_it(tmp_path):
    kwargs = {"spec": SPEC, "scope": "project", "skill_root": tmp_path, "existing": {"csv"}}
    with pytest.raises(InstallError, match="already installed"):
        plan.plan_install([CSV], force=False, **kwargs)
    assert plan.plan_install([CSV], force=True, **kwargs)[0].replaces


def test_plan_refuses_collisions_and_name_for_several(tmp_path):
    twin = plan.Found(rel="other/csv", dir_name="csv")
    kwargs = {
        "spec": SPEC,
        "scope": "project",
        "skill_root": tmp_path,
        "existing": (),
        "force": False,
    }
    with pytest.raises(InstallError, match="both be installed as 'csv'"):
        plan.plan_install([CSV, twin], **kwargs)
    with pytest.raises(InstallError, match="single skill") as exc:
        plan.plan_install([CSV, PDF], name="x", **kwargs)
    assert str(exc.value).startswith("--name can only be used")
    assert "--skill NAME" in (exc.value.hint or "")


def _report(findings=(), scripts=()):
    files = tuple(FileInfo(path=s, size=1, sha256="h", kind="script") for s in scripts)
    return AuditReport(verdict="pass", findings=tuple(findings), files=files, content_hash="c")


def test_lock_record_round_trips_to_the_source_and_keeps_installed_at(tmp_path):
    [p] = plan.plan_install(
        [DOCX], spec=SPEC, scope="global", skill_root=tmp_path, existing=(), force=False
    )
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    rec = plan.lock_record(
        p,
        _report(),
        commit="abc",
        trust="community",
        approved_by="approve-flag",
        now=now,
        previous={"installed_at": "2025-01-01T00:00:00+00:00"},
    )
    assert rec["installed_at"] == "2025-01-01T00:00:00+00:00"
    assert rec["updated_at"] == "2026-01-02T03:04:05+00:00"
    assert rec["bundle"]["name"] == "office"
    assert plan.spec_from_record(rec) == p.spec


def test_a_record_without_a_source_cannot_be_updated():
    with pytest.raises(InstallError, match="no usable source"):
        plan.spec_from_record({"key": "x", "kind": "npm", "location": "x"})


def test_reapproval_only_for_new_findings_or_new_scripts():
    old = AuditFinding(
        rule="net", severity="warn", message="m", file="a.sh", line=3, excerpt="curl"
    )
    moved = AuditFinding(
        rule="net", severity="warn", message="m", file="a.sh", line=9, excerpt="curl"
    )
    fresh = AuditFinding(rule="exec", severity="warn", message="m", file="a.sh", excerpt="eval")
    rec = {"scripts": ["a.sh"], "audit": {"findings": [old.to_dict()]}}
    assert not plan.needs_reapproval(rec, _report([moved], ["a.sh"]))
    assert plan.needs_reapproval(rec, _report([moved, fresh], ["a.sh"]))
    assert plan.new_findings(rec, _report([moved, fresh])) == (fresh,)
    assert plan.needs_reapproval(rec, _report([moved], ["a.sh", "b.py"]))
