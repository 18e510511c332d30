from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest

from lemon_skills import introspection
from lemon_skills.errors import ConfigError
from lemon_skills.introspection import IntrospectionStore, parse_since
from lemon_skills.skills.selection import offer
from lemon_skills.tools import ToolContext, read_skill, skill_manage
from tests.helpers.skills import write_skill


def test_database_is_wal_with_a_schema_version(tmp_path):
    store = IntrospectionStore(tmp_path / "introspection.db")
    store.record("skill_load_observed", {"view": "full"}, ts=1.0, key="a")
    store.close()
    conn = sqlite3.connect(tmp_path / "introspection.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == introspection.SCHEMA_VERSION
    finally:
        conn.close()


def test_a_newer_schema_is_refused_not_guessed(tmp_path):
    path = tmp_path / "introspection.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(ConfigError, match="schema version 99 is newer") as info:
        IntrospectionStore(path).record("skill_load_observed", {}, ts=1.0)
    assert info.value.hint and "upgrade lemon-skills" in info.value.hint


def test_query_filters_by_time_key_and_type_and_keeps_the_newest(tmp_path):
    store = IntrospectionStore(tmp_path / "db")
    for i, (kind, key) in enumerate(
        [("skill_load_observed", "a"), ("skill_write_observed", "a"), ("skill_load_observed", "b")]
    ):
        store.record(kind, {"i": i}, ts=100.0 + i, key=key, session_key="s", run_id="r")
    assert [r.payload["i"] for r in store.query()] == [0, 1, 2]
    assert [r.payload["i"] for r in store.query(since=101.0)] == [1, 2]
    assert [r.payload["i"] for r in store.query(key="a")] == [0, 1]
    assert [r.payload["i"] for r in store.query(types=["skill_write_observed"])] == [1]
    assert [r.payload["i"] for r in store.query(limit=2)] == [1, 2]
    row = store.query()[0]
    assert (row.session_key, row.run_id, row.engine, row.provenance) == (
        "s",
        "r",
        "lemon",
        "direct",
    )
    assert row.to_dict()["recorded_at"] == "1970-01-01T00:01:40Z"
    store.close()


def test_query_of_a_missing_database_is_empty_and_creates_nothing(tmp_path):
    assert IntrospectionStore(tmp_path / "none.db").query() == []
    assert not (tmp_path / "none.db").exists()


def test_parse_since():
    now = 1_000_000.0
    assert parse_since("30m", now=now) == now - 1800
    assert parse_since("2h", now=now) == now - 7200
    assert parse_since("7d", now=now) == now - 7 * 86400
    assert parse_since("1w", now=now) == now - 7 * 86400
    assert parse_since("2026-05-01", now=now) == datetime(2026, 5, 1, tzinfo=UTC).timestamp()
    assert (
        parse_since("2026-05-01T10:00:00Z", now=now)
        == datetime(2026, 5, 1, 10, tzinfo=UTC).timestamp()
    )
    with pytest.raises(ValueError, match="neither a duration"):
        parse_since("last week", now=now)


def test_tool_events_are_persisted_with_run_and_session_ids(project, project_skills, agent_dir):
    write_skill(project_skills, "pdf")
    ctx = ToolContext(
        cwd=project, tool_call_id="c1", run_id="run-7", session_id="sess-7", agent_id="ag-7"
    )
    read_skill.call({"key": "pdf"}, ctx)
    skill_manage.call({"action": "pin", "name": "pdf"}, ctx)
    skill_manage.call({"action": "report"}, ctx)
    load, write = introspection.IntrospectionStore(agent_dir / "introspection.db").query()
    assert load.type == "skill_load_observed" and load.key == "pdf" and load.result == "ok"
    assert (load.run_id, load.session_key, load.session_id, load.agent_id) == (
        "run-7",
        "sess-7",
        "sess-7",
        "ag-7",
    )
    assert load.payload["tool_call_id"] == "c1" and "run_id" not in load.payload
    assert write.type == "skill_write_observed" and write.payload["action"] == "pin"


def test_prompt_render_is_persisted_with_keys_but_no_text(project, project_skills, agent_dir):
    write_skill(project_skills, "pdf", description="Extract text from PDF files.")
    write_skill(project_skills, "docker", description="Build container images.")
    rendered = offer.render_prompt(
        "extract the text of this pdf", cwd=project, context={"run_id": "r1", "session_key": "k"}
    )
    assert rendered.relevant == ("pdf",)
    (row,) = introspection.IntrospectionStore(agent_dir / "introspection.db").query()
    assert row.type == "skill_prompt_render_observed"
    assert (row.run_id, row.session_key) == ("r1", "k")
    assert row.payload["surface"] == "relevant"
    assert row.payload["relevant_keys"] == ["pdf"]
    assert sorted(row.payload["skill_keys"]) == ["docker", "pdf"]
    assert row.payload["skill_count"] == 2
    assert "extract the text" not in str(row.to_dict())


def test_the_bridge_can_be_turned_off_and_on(project, global_skills, agent_dir):
    from lemon_skills.skills.usage import observe

    write_skill(global_skills, "pdf")
    observe.set_bridge(False)
    try:
        assert observe.BRIDGE_ID not in introspection_handlers()
        read_skill.call({"key": "pdf"}, ToolContext(cwd=project))
        assert not (agent_dir / "skills.usage.json").exists()
        assert not (agent_dir / "introspection.db").exists()
    finally:
        observe.set_bridge(True)
    read_skill.call({"key": "pdf"}, ToolContext(cwd=project))
    assert (agent_dir / "skills.usage.json").exists()
    assert len(IntrospectionStore(agent_dir / "introspection.db").query()) == 1


def introspection_handlers() -> list[str]:
    from lemon_skills import telemetry

    return telemetry.attached()


def test_old_events_are_pruned_so_the_store_stays_bounded(tmp_path):
    store = IntrospectionStore(tmp_path / "i.db", max_events=50)
    for i in range(400):
        store.record("skill.load", {"n": i}, ts=float(i), key="k")
    rows = store.query()
    assert 50 <= len(rows) <= 55
    assert rows[-1].payload == {"n": 399}
    assert rows[0].payload["n"] >= 400 - 55


def test_the_bound_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LEMON_INTROSPECTION_MAX_EVENTS", "7")
    assert IntrospectionStore(tmp_path / "i.db").max_events == 7
    monkeypatch.setenv("LEMON_INTROSPECTION_MAX_EVENTS", "lots")
    assert IntrospectionStore(tmp_path / "i.db").max_events == introspection.DEFAULT_MAX_EVENTS
