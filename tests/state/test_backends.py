"""The same state behaviour on both backends: the embedded files and PostgreSQL.

Each test runs twice (``backend`` is ``embedded`` or ``postgresql``); on PostgreSQL nothing
may be written under the agent dir instead of the database.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import types

from lemon_skills import introspection, state
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ApprovalError
from lemon_skills.mcp.catalog import pinning
from lemon_skills.skills.curator import rollback as curator_rollback
from lemon_skills.skills.curator import run as curator_run
from lemon_skills.skills.usage.store import UsageStore, usage_path
from tests.helpers.curator import NOW, standard_library


def tool(description: str = "Look something up.") -> types.Tool:
    return types.Tool(name="lookup", description=description, input_schema={"type": "object"})


def local_files(agent_dir: Path) -> list[str]:
    if not agent_dir.exists():
        return []
    return sorted(str(p.relative_to(agent_dir)) for p in agent_dir.rglob("*") if p.is_file())


def test_a_denial_is_final_and_the_approval_stays_listed_as_denied(backend, agent_dir):
    store = ApprovalStore()
    asked = store.create("skills.install", {"skill": "demo"}, rationale="install demo")
    assert [a.id for a in store.list()] == [asked.id]
    assert store.deny(asked.id[:8], by="ops").status == "denied"
    with pytest.raises(ApprovalError, match="already denied"):
        store.approve(asked.id)
    assert store.list() == []
    assert [a.status for a in store.list(status=None)] == ["denied"]
    if backend == "postgresql":
        assert local_files(agent_dir) == []


def test_a_waiting_call_is_released_by_a_decision_made_elsewhere(backend, agent_dir):
    store = ApprovalStore()
    asked = store.create("mcp.call", {"tool": "delete"}, rationale="destructive")
    threading.Timer(0.3, lambda: ApprovalStore().approve(asked.id, by="ops")).start()
    started = time.monotonic()
    outcome = store.wait(asked.id, timeout=20)
    assert outcome.approved
    assert time.monotonic() - started < 3  # a decision wakes the waiter, not a slow poll


def test_an_async_waiter_is_released_and_a_cancelled_request_is_withdrawn(backend):
    store = ApprovalStore()
    asked = store.create("mcp.call", {"tool": "delete"}, rationale="destructive")
    threading.Timer(0.2, lambda: ApprovalStore().deny(asked.id, reason="no")).start()
    outcome = anyio.run(lambda: store.await_decision(asked.id, timeout=20))
    assert outcome.status == "denied"

    async def give_up() -> None:
        with anyio.move_on_after(0.3):
            await store.arequest("mcp.call", {"tool": "again"}, rationale="r", timeout=60)

    anyio.run(give_up)
    [withdrawn] = [a for a in store.list(status=None) if a.tool == "mcp.call" and a.id != asked.id]
    assert withdrawn.status == "cancelled"


def test_pins_hold_a_changed_tool_until_approved(backend, agent_dir):
    assert pinning.review("srv", [tool()]).held == {}
    before = pinning.generation("srv")
    held = pinning.review("srv", [tool("Look it up, then email it.")]).held
    assert "changed since it was pinned" in held["lookup"]
    assert pinning.approve("srv", [tool("Look it up, then email it.")]) == ["lookup"]
    assert pinning.review("srv", [tool("Look it up, then email it.")]).held == {}
    if backend == "postgresql":
        assert pinning.generation("srv") != before
        assert local_files(agent_dir) == []
    else:
        assert pinning.generation("srv") is None


def test_usage_counts_loads_and_writes_and_keeps_lifecycle(backend, agent_dir):
    store = UsageStore.for_scope("global")
    for _ in range(3):
        assert store.record_load({"key": "pdf", "result": "ok", "run_id": "r1"})
    store.record_write({"name": "pdf", "result": "ok", "action": "edit", "agent_id": "a"})
    store.record_write({"name": "pdf", "result": "error", "path": "/x", "action": "edit"})
    store.set_state("pdf", "pinned", agent_id="ops")
    rec = store.get("pdf")
    assert (rec["load_count"], rec["write_count"], rec["write_error_count"]) == (3, 1, 1)
    assert rec["last_run_id"] == "r1"
    assert rec["lifecycle_state"] == "pinned" and store.is_pinned("pdf")
    store.record_load({"key": "pdf", "result": "ok"})
    assert store.get("pdf")["lifecycle_state"] == "pinned"  # a count never resets lifecycle
    assert store.forget("pdf")
    assert "pdf" not in store.records()
    if backend == "postgresql":
        assert local_files(agent_dir) == []


def test_skill_events_are_recorded_and_queried(backend, agent_dir):
    store = introspection.default_store()
    first = store.record("skill_load_observed", {"tokens": 12}, ts=100.0, key="pdf", result="ok")
    store.record("skill_write_observed", {}, ts=200.0, key="csv", result="error")
    assert first > 0
    rows = store.query(since=50.0)
    assert [(r.type, r.key) for r in rows] == [
        ("skill_load_observed", "pdf"),
        ("skill_write_observed", "csv"),
    ]
    assert rows[0].payload == {"tokens": 12}
    assert [r.key for r in store.query(key="csv")] == ["csv"]
    if backend == "postgresql":
        assert local_files(agent_dir) == []


def test_listeners_hear_changes_on_the_shared_database_and_time_out_on_files(backend):
    listener = state.backend().listen("lemon_test")
    try:
        threading.Timer(0.2, lambda: state.backend().notify("lemon_test", "x")).start()
        started = time.monotonic()
        woke = listener.wait(5.0 if backend == "postgresql" else 0.5)
    finally:
        listener.close()
    assert woke is (backend == "postgresql")
    assert time.monotonic() - started < 2.0


def test_a_curator_pass_and_its_rollback_change_the_backend_s_records(
    backend, agent_dir, global_skills
):
    usage = usage_path("global")
    standard_library(global_skills, usage)
    before = UsageStore(usage).records()

    curator_run.run(now=NOW)
    records = UsageStore(usage).records()
    assert records["old"]["lifecycle_state"] == "archived"
    assert records["mid"]["lifecycle_state"] == "stale"
    assert records["keep"] == before["keep"] and records["mine"] == before["mine"]

    assert curator_rollback.rollback(pause=False).restored == ("mid", "old")
    assert UsageStore(usage).get("old")["lifecycle_state"] == "active"
    assert usage.exists() is (backend == "embedded")


def test_a_tool_relabelled_read_only_is_held_until_approved(backend):
    pinning.review("srv", [tool()])
    relabelled = tool().model_copy(
        update={"annotations": types.ToolAnnotations(read_only_hint=True)}
    )
    assert "title or annotations" in pinning.review("srv", [relabelled]).held["lookup"]
    assert pinning.approve("srv", [relabelled]) == ["lookup"]
    assert pinning.review("srv", [relabelled]).held == {}
