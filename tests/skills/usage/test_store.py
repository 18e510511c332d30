from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lemon_skills.errors import ConfigError, UsageError
from lemon_skills.skills.catalog import doctor
from lemon_skills.skills.usage.report import build_report, format_report
from lemon_skills.skills.usage.store import UsageStore, normalise, usage_path
from lemon_skills.tools import ToolContext, read_skill
from tests.helpers.skills import write_skill

T0 = datetime(2026, 5, 6, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def store(tmp_path: Path, clock: Clock | None = None) -> UsageStore:
    return UsageStore(tmp_path / "skills.usage.json", clock=clock or Clock())


def test_paths_per_scope(agent_dir, project):
    assert usage_path("global") == agent_dir / "skills.usage.json"
    assert usage_path("project", project) == project / ".lemon" / "skills.usage.json"


def test_record_load_counts_hits_with_last_use_fields(tmp_path):
    s = store(tmp_path)
    meta = {
        "result": "ok",
        "key": "pdf",
        "view": "section",
        "tool_call_id": "c1",
        "session_id": "s1",
        "run_id": "r1",
        "source": "project",
        "path": "/p/pdf",
    }
    assert s.record_load(meta)
    assert s.record_load({**meta, "tool_call_id": "c2", "view": ""})
    assert not s.record_load({**meta, "result": "not_found"})
    assert not s.record_load({**meta, "key": "  "})
    data = json.loads(s.path.read_text())
    assert data["version"] == 1
    assert data["skills"]["pdf"] == {
        "lifecycle_state": "active",
        "pinned": False,
        "load_count": 2,
        "last_loaded_at": "2026-05-06T00:00:00Z",
        "last_view": "section",  # an empty value does not overwrite
        "last_tool_call_id": "c2",
        "last_session_key": "s1",
        "last_run_id": "r1",
        "source": "project",
        "path": "/p/pdf",
    }


def test_record_write_counts_accepted_and_rejected_writes(tmp_path):
    s = store(tmp_path)
    base = {"name": "pdf", "action": "patch", "agent_id": "ag", "path": "/p/pdf"}
    s.record_write({**base, "result": "ok", "file_path": "SKILL.md"})
    s.record_write({**base, "result": "error"})
    rec = s.get("pdf")
    assert rec["write_count"] == 1 and rec["write_error_count"] == 1
    assert rec["last_action"] == "patch" and rec["last_writer_agent_id"] == "ag"
    assert rec["file_path"] == "SKILL.md" and rec["last_write_at"] == "2026-05-06T00:00:00Z"
    assert "created_by" not in rec


def test_rejected_writes_without_a_skill_on_disk_create_no_record(tmp_path):
    s = store(tmp_path)
    assert not s.record_write({"name": "../x", "action": "create", "result": "error"})
    assert not s.record_write({"name": "ghost", "action": "patch", "result": "error"})
    assert s.records() == {}


def test_provenance_only_after_a_successful_create(tmp_path):
    clock = Clock()
    s = store(tmp_path, clock)
    s.record_write({"name": "a", "action": "create", "result": "error", "path": "/p/a"})
    assert "created_by" not in s.get("a")
    s.record_write({"name": "a", "action": "create", "result": "ok", "agent_id": "ag"})
    clock.now = T0 + timedelta(days=1)
    s.record_write({"name": "a", "action": "create", "result": "ok", "agent_id": "other"})
    rec = s.get("a")
    assert rec["created_by"] == "agent" and rec["created_by_agent_id"] == "ag"
    assert rec["created_at"] == "2026-05-06T00:00:00Z"  # set once


def test_successful_delete_drops_the_record(tmp_path):
    s = store(tmp_path)
    s.record_write({"name": "a", "action": "create", "result": "ok"})
    s.record_write({"name": "a", "action": "delete", "result": "ok"})
    assert s.records() == {}


def test_pinned_is_a_flag_that_coexists_with_archived(tmp_path):
    s = store(tmp_path)
    assert s.set_pinned("a", True)["lifecycle_state"] == "pinned"
    rec = s.set_state("a", "archived")
    assert rec["lifecycle_state"] == "archived" and rec["pinned"] is True
    rec = s.set_pinned("a", False)
    assert rec["lifecycle_state"] == "archived" and rec["pinned"] is False
    s.set_state("b", "pinned")
    assert s.is_pinned("b")
    assert s.set_state("b", "stale")["lifecycle_state"] == "pinned"  # pinned skills never go stale
    assert s.set_pinned("b", False)["lifecycle_state"] == "active"
    assert s.get("b")["state_updated_at"] == "2026-05-06T00:00:00Z"
    with pytest.raises(UsageError, match="invalid lifecycle state: gone"):
        s.set_state("a", "gone")


def test_unknown_key_and_legacy_records_normalise(tmp_path):
    assert store(tmp_path).get("nobody") == {"lifecycle_state": "active", "pinned": False}
    assert normalise({"lifecycle_state": "pinned"}) == {"lifecycle_state": "pinned", "pinned": True}
    assert normalise({"lifecycle_state": "weird"})["lifecycle_state"] == "active"


def test_corrupt_sidecar_is_reported_and_never_overwritten(tmp_path):
    s = store(tmp_path)
    s.path.write_text("{not json")
    with pytest.raises(ConfigError, match="corrupt JSON"):
        s.record_load({"result": "ok", "key": "a"})
    assert s.path.read_text() == "{not json"


def test_read_skill_still_works_when_the_sidecar_is_corrupt(project, project_skills, caplog):
    write_skill(project_skills, "pdf")
    sidecar = project / ".lemon" / "skills.usage.json"
    sidecar.write_text("[]")
    r = read_skill.call({"key": "pdf"}, ToolContext(cwd=project))
    assert not r.is_error
    assert sidecar.read_text() == "[]"
    assert "skill usage not recorded" in caplog.text


def _rec(**kw: object) -> dict[str, object]:
    return {"created_by": "agent", **kw}


def test_report_flags_idle_agent_authored_skills():
    now = datetime(2026, 5, 1, tzinfo=UTC)
    rows = build_report(
        {
            "old": _rec(last_loaded_at="2026-01-01T00:00:00Z"),
            "mid": _rec(last_write_at="2026-03-20T00:00:00Z"),
            "fresh": _rec(created_at="2026-04-30T00:00:00Z", load_count=3),
            "human": {"last_loaded_at": "2025-01-01T00:00:00Z"},
            "kept": _rec(last_loaded_at="2025-01-01T00:00:00Z", lifecycle_state="pinned"),
            "gone": _rec(last_loaded_at="2025-01-01T00:00:00Z", lifecycle_state="archived"),
            "odd": _rec(last_loaded_at="yesterday"),
        },
        now=now,
    )
    by = {r.name: r for r in rows}
    assert by["old"].idle_days == 120
    assert by["old"].stale_candidate and by["old"].archive_candidate
    assert by["mid"].idle_days == 42 and by["mid"].stale_candidate
    assert not by["mid"].archive_candidate
    assert not by["fresh"].stale_candidate and by["fresh"].load_count == 3
    assert not by["human"].stale_candidate and not by["human"].agent_authored
    assert not by["kept"].stale_candidate and not by["gone"].archive_candidate
    assert by["odd"].last_activity_at == "yesterday" and by["odd"].idle_days is None
    assert [r.name for r in rows] == ["old", "mid", "fresh", "gone", "human", "kept", "odd"]


def test_report_thresholds_and_defaults():
    now = datetime(2026, 5, 1, tzinfo=UTC)
    recs = {"a": _rec(last_loaded_at="2026-04-21T00:00:00Z")}
    assert build_report(recs, now=now, stale_after_days=10)[0].stale_candidate
    (row,) = build_report(recs, now=now, stale_after_days=0, archive_after_days=-1)
    assert not row.stale_candidate  # 10 idle days < default 30


def test_report_text():
    now = datetime(2026, 5, 1, tzinfo=UTC)
    rows = build_report(
        {
            "old": _rec(last_loaded_at="2026-01-01T00:00:00Z", load_count=2, write_count=1),
            "new": {},
        },
        now=now,
    )
    assert format_report("project", rows) == (
        "Skill usage report for project scope:\n"
        "- old: archive-candidate, stale-candidate, active; loads=2; writes=1; idle_days=120; "
        "last_activity=2026-01-01T00:00:00Z\n"
        "- new: active; loads=0; writes=0; idle_days=unknown; last_activity=never"
    )
    assert format_report("global", []) == "No global skill usage records found."


def test_doctor_explains_archived_stale_and_pinned(project, project_skills):
    for key in ("arch", "stale", "pin"):
        write_skill(project_skills, key)
    s = UsageStore.for_scope("project", project)
    s.set_state("arch", "archived")
    s.set_state("stale", "stale")
    s.set_pinned("pin", True)
    reports = {r.key: r for r in doctor.doctor(cwd=project)}
    assert any("archived since" in x and "action=restore" in x for x in reports["arch"].reasons)
    assert any("archived but enabled again" in x for x in reports["arch"].reasons)
    assert any("marked stale" in x for x in reports["stale"].reasons)
    assert any("pinned: protected from delete and archive" in x for x in reports["pin"].reasons)
