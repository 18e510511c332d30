from __future__ import annotations

import json

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.cli import main


def pending(tool: str = "skills.install") -> str:
    return (
        ApprovalStore()
        .create(
            tool,
            {"operation": "install", "skill_name": "demo"},
            rationale="Install skill 'demo' from ./demo",
            context=ApprovalContext(run_id="run-7"),
        )
        .id
    )


def test_list_json_shows_pending_approvals(agent_dir, capsys):
    aid = pending()
    assert main(["approvals", "list", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)
    assert item["id"] == aid
    assert item["status"] == "pending"
    assert item["run_id"] == "run-7"
    assert item["action"]["skill_name"] == "demo"


def test_bare_group_lists_as_a_table(agent_dir, capsys):
    aid = pending()
    assert main(["approvals"]) == 0
    out = capsys.readouterr().out
    assert aid[:12] in out
    assert "Install skill 'demo'" in out


def test_approve_then_list_all_shows_the_decision(agent_dir, capsys):
    aid = pending()
    assert main(["approvals", "approve", aid[:8], "--by", "alice", "--json"]) == 0
    decided = json.loads(capsys.readouterr().out)
    assert decided["status"] == "approved"
    assert decided["decided_by"] == "alice"
    assert main(["approvals", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["approvals", "list", "--all", "--json"]) == 0
    assert [a["status"] for a in json.loads(capsys.readouterr().out)] == ["approved"]


def test_deny_records_the_operator_and_reason(agent_dir, capsys):
    aid = pending()
    assert main(["approvals", "deny", aid, "--reason", "not today"]) == 0
    out = capsys.readouterr().out
    assert "denied" in out
    assert "not today" in out
    stored = ApprovalStore().get(aid)
    assert stored.status == "denied"
    assert stored.decided_by and stored.decided_by.endswith("cli")


def test_show_prints_the_action_payload(agent_dir, capsys):
    aid = pending("mcp_demo_sampling")
    assert main(["approvals", "show", aid]) == 0
    out = capsys.readouterr().out
    assert "mcp_demo_sampling" in out
    assert '"skill_name": "demo"' in out


def test_unknown_id_is_an_error_with_a_hint(agent_dir, capsys):
    assert main(["approvals", "approve", "abcdef"]) == 1
    err = capsys.readouterr().err
    assert "Approval not found: abcdef" in err
    assert "lemon approvals list --all" in err


def test_deciding_twice_differently_fails(agent_dir, capsys):
    aid = pending()
    assert main(["approvals", "approve", aid]) == 0
    assert main(["approvals", "deny", aid]) == 1
    assert "already approved" in capsys.readouterr().err


def test_reading_approvals_creates_no_database(agent_dir, capsys):
    assert main(["approvals", "list", "--all"]) == 0
    assert main(["approvals", "show", "abcdef"]) == 1
    assert "Approval not found: abcdef" in capsys.readouterr().err
    assert not (agent_dir / "approvals.db").exists()


def test_deciding_an_unknown_id_creates_no_database(agent_dir, capsys):
    assert main(["approvals", "approve", "abcdef"]) == 1
    assert main(["approvals", "deny", "abcdef", "--json"]) == 1
    err = capsys.readouterr().err
    assert err.count("Approval not found: abcdef") == 2
    assert not (agent_dir / "approvals.db").exists()
