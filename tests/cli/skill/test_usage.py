from __future__ import annotations

import json

from lemon_skills.cli import main
from lemon_skills.skills.usage.store import UsageStore
from lemon_skills.tools import ToolContext, read_skill, skill_manage
from tests.helpers.skills import write_skill


def _activity(project, project_skills):
    write_skill(project_skills, "pdf")
    write_skill(project_skills, "docker")
    ctx = ToolContext(cwd=project, session_id="sess-1")
    read_skill.call({"key": "pdf", "view": "summary"}, ctx)
    read_skill.call({"key": "docker"}, ctx)
    skill_manage.call({"action": "pin", "name": "pdf"}, ctx)


def test_events_json_lists_loads_and_writes(project, project_skills, capsys):
    _activity(project, project_skills)
    assert main(["skill", "events", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["type"], r["key"]) for r in rows] == [
        ("skill_load_observed", "pdf"),
        ("skill_load_observed", "docker"),
        ("skill_write_observed", "pdf"),
    ]
    assert rows[0]["session_key"] == "sess-1" and rows[0]["payload"]["view"] == "summary"


def test_events_filters(project, project_skills, capsys):
    _activity(project, project_skills)
    assert main(["skill", "events", "--json", "--key", "pdf", "--type", "write"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["type"], r["payload"]["action"]) for r in rows] == [("skill_write_observed", "pin")]
    assert main(["skill", "events", "--json", "--since", "1h"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    assert main(["skill", "events", "--json", "--since", "2999-01-01"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_events_table_and_bad_since(project, project_skills, capsys):
    _activity(project, project_skills)
    assert main(["skill", "events"]) == 0
    out = capsys.readouterr().out
    assert "EVENT" in out and "view=summary" in out and "pin" in out
    assert main(["skill", "events", "--since", "lately"]) == 2
    assert "neither a duration" in capsys.readouterr().err


def test_usage_reports_both_scopes_with_candidate_flags(project, project_skills, capsys):
    write_skill(project_skills, "old")
    store = UsageStore.for_scope("project", project)
    store.record_write({"name": "old", "action": "create", "result": "ok"})
    data = json.loads(store.path.read_text())
    data["skills"]["old"].update(
        created_at="2020-01-01T00:00:00Z", last_write_at="2020-01-01T00:00:00Z"
    )
    store.path.write_text(json.dumps(data))
    UsageStore.for_scope("global").record_load({"result": "ok", "key": "g", "source": "global"})
    assert main(["skill", "usage", "--json", "--cwd", str(project)]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["g"]["scope"] == "global" and rows["g"]["load_count"] == 1
    assert rows["old"]["scope"] == "project"
    assert rows["old"]["archive_candidate"] and rows["old"]["stale_candidate"]
    assert rows["old"]["markers"] == ["archive-candidate", "stale-candidate", "active"]
    assert main(["skill", "usage", "--cwd", str(project), "--scope", "project"]) == 0
    out = capsys.readouterr().out
    assert "archive-candidate" in out and "old" in out and " g " not in out


def test_usage_with_nothing_recorded(project, capsys):
    assert main(["skill", "usage", "--cwd", str(project)]) == 0
    assert "no skill usage recorded yet" in capsys.readouterr().err


def test_usage_with_a_corrupt_sidecar_is_an_error_with_a_hint(project, capsys):
    (project / ".lemon").mkdir()
    (project / ".lemon" / "skills.usage.json").write_text("{oops")
    assert main(["skill", "usage", "--cwd", str(project)]) == 1
    err = capsys.readouterr().err
    assert "corrupt JSON" in err and "hint:" in err


def test_doctor_explains_an_archived_skill(project, project_skills, capsys):
    write_skill(project_skills, "pdf")
    UsageStore.for_scope("project", project).record_created("pdf")  # the agent's own skill
    r = skill_manage.call({"action": "archive", "name": "pdf"}, ToolContext(cwd=project))
    assert not r.is_error, r.text
    assert main(["skill", "doctor", "pdf", "--cwd", str(project)]) == 0
    out = capsys.readouterr().out
    assert "hidden" in out and "archived since" in out and "action=restore" in out
