from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from lemon_skills import approvals
from lemon_skills.approvals import table
from lemon_skills.approvals.records import Approval, ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ApprovalError, ApprovalNotFound, ConfigError

# A second, real process that waits for the first pending approval and decides it through the
# `lemon approvals` CLI, the way an operator in another terminal would.
DECIDER = textwrap.dedent(
    """
    import sys, time
    from lemon_skills import approvals
    from lemon_skills.cli import main
    verb = sys.argv[1]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pending = approvals.list_approvals()
        if pending:
            sys.exit(main(["approvals", verb, pending[0].id[:8], "--by", "ops", "--reason", "ok"]))
        time.sleep(0.02)
    sys.exit(9)
    """
)


def spawn_decider(verb: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", DECIDER, verb], env=dict(os.environ), stdout=subprocess.DEVNULL
    )


def test_request_blocks_until_another_process_approves(agent_dir):
    decider = spawn_decider("approve")
    result = approvals.request(
        "skills.install",
        {"operation": "install", "skill_name": "demo"},
        rationale="Install skill 'demo' from ./demo",
        context=ApprovalContext(run_id="run-1", session_key="agent:main", agent_id="a1"),
        timeout=30,
    )
    assert decider.wait(timeout=30) == 0
    assert result.approved
    assert result.decided_by == "ops"
    assert result.reason == "ok"
    assert result.context == ApprovalContext(
        run_id="run-1", session_key="agent:main", agent_id="a1"
    )
    assert result.action == {"operation": "install", "skill_name": "demo"}


def test_request_reports_a_denial_from_another_process(agent_dir):
    decider = spawn_decider("deny")
    result = approvals.request("skills.uninstall", {}, rationale="Uninstall skill 'x'", timeout=30)
    assert decider.wait(timeout=30) == 0
    assert result.status == "denied"
    assert not result.approved


def test_async_request_is_resolved_by_the_in_process_api(agent_dir):
    store = ApprovalStore()

    async def main() -> Approval:
        async with anyio.create_task_group() as tg:
            outcome: list[Approval] = []

            async def ask() -> None:
                outcome.append(await store.arequest("t", {"k": 1}, rationale="r", timeout=30))

            tg.start_soon(ask)
            with anyio.fail_after(10):
                while not store.list():
                    await anyio.sleep(0.01)
            store.approve(store.list()[0].id, by="host")
        return outcome[0]

    result = anyio.run(main)
    assert result.approved
    assert result.decided_by == "host"


def test_unanswered_request_expires_and_cannot_be_approved_later(agent_dir):
    result = approvals.request("t", {}, rationale="r", timeout=0.2)
    assert result.status == "expired"
    with pytest.raises(ApprovalError, match="already expired"):
        approvals.approve(result.id)
    assert approvals.list_approvals() == []


def test_overdue_pending_approvals_show_as_expired_without_a_waiter(agent_dir):
    now = [1000.0]
    store = ApprovalStore(clock=lambda: now[0])
    created = store.create("t", {}, rationale="r", expires_in=60)
    assert [a.id for a in store.list()] == [created.id]
    now[0] += 61
    assert store.list() == []
    assert store.get(created.id).status == "expired"


def test_cancelled_async_request_withdraws_the_approval(agent_dir):
    store = ApprovalStore()

    async def main() -> None:
        with anyio.move_on_after(0.3):
            await store.arequest("t", {}, rationale="r", timeout=30)

    anyio.run(main)
    [only] = store.list(status=None)
    assert only.status == "cancelled"
    with pytest.raises(ApprovalError):
        store.approve(only.id)


def test_wait_with_a_short_timeout_leaves_the_approval_pending(agent_dir):
    store = ApprovalStore()
    created = store.create("t", {}, rationale="r", expires_in=60)
    assert store.wait(created.id, timeout=0.05).status == "pending"
    assert store.get(created.id).pending


def test_decisions_are_idempotent_but_final(agent_dir):
    store = ApprovalStore()
    created = store.create("t", {}, rationale="r")
    first = store.approve(created.id, by="a")
    again = store.approve(created.id, by="b")
    assert again.decided_by == first.decided_by == "a"
    with pytest.raises(ApprovalError, match="already approved"):
        store.deny(created.id)


def test_ids_resolve_by_unique_prefix(agent_dir):
    store = ApprovalStore()
    created = store.create("t", {}, rationale="r")
    assert store.get(created.id[:6]).id == created.id
    assert store.get(created.id.upper()).id == created.id
    with pytest.raises(ApprovalNotFound):
        store.get("zz-not-hex")
    with pytest.raises(ApprovalNotFound):
        store.get("0" * 32 if not created.id.startswith("0") else "f" * 32)
    more = [store.create("t", {}, rationale="r") for _ in range(40)]
    firsts = [a.id[0] for a in [created, *more]]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    with pytest.raises(ApprovalError, match="ambiguous"):
        store.get(shared)


def test_database_is_private_and_versioned(agent_dir):
    store = ApprovalStore()
    store.create("t", {}, rationale="r")
    path = agent_dir / "approvals.db"
    assert store.path == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == table.SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_newer_schema_is_refused_not_rewritten(agent_dir):
    path = agent_dir / "approvals.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(ConfigError, match="newer"):
        ApprovalStore().list()


def test_a_corrupt_database_is_reported(agent_dir):
    path = agent_dir / "approvals.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match="unusable"):
        ApprovalStore().list()
    assert path.read_bytes().startswith(b"this is not a database")


def test_the_store_follows_the_agent_dir_at_call_time(tmp_path: Path, monkeypatch):
    store = ApprovalStore()
    monkeypatch.setenv("LEMON_AGENT_DIR", str(tmp_path / "one"))
    store.create("t", {}, rationale="r")
    monkeypatch.setenv("LEMON_AGENT_DIR", str(tmp_path / "two"))
    assert store.list() == []
    assert (tmp_path / "one" / "approvals.db").exists()


def test_to_dict_is_json_ready(agent_dir):
    created = ApprovalStore().create(
        "mcp_demo_oauth",
        {"type": "x", "n": 1},
        rationale="why",
        context=ApprovalContext(run_id="r"),
    )
    data = json.loads(json.dumps(created.to_dict()))
    assert data["tool"] == "mcp_demo_oauth"
    assert data["action"] == {"type": "x", "n": 1}
    assert data["status"] == "pending"
    assert data["run_id"] == "r"
    assert data["expires_at"].endswith("Z")


def test_looking_up_by_id_never_creates_the_database(agent_dir):
    store = ApprovalStore()
    for lookup in (store.approve, store.deny, store.cancel, store.wait):
        with pytest.raises(ApprovalNotFound):
            lookup("abcdef")
    assert not store.path.exists()
