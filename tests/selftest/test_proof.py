"""The proof JSON: every check recorded whatever the others do, a status from the counts,
failures without paths, a latest file plus an archive copy, and a private agent dir."""

from __future__ import annotations

import json
import os

import pytest

from lemon_skills.errors import McpToolError
from lemon_skills.selftest.proof import (
    Proof,
    expect,
    expect_raises,
    hint,
    private_state,
    write_proof,
)


def fail() -> None:
    raise OSError("cannot open /home/someone/.lemon/agent/secrets.json: denied")


def test_a_failed_check_is_recorded_without_paths_and_the_next_one_still_runs():
    proof = Proof("stdio")
    proof.check("first", fail)
    proof.check("second", lambda: None)
    result = proof.result()
    assert (result["status"], result["completed_count"], result["failed_count"]) == ("failed", 1, 1)
    first, second = result["checks"]
    assert first == {
        "name": "first",
        "proof_scope": "mcp_stdio_smoke",
        "status": "failed",
        "reason_kind": "mcp_stdio_smoke_failure",
        "failure_hint": "OSError: cannot open <path>: denied",
    }
    assert second["status"] == "completed"
    assert result["proof"] == result["proof_scope"] == "mcp_stdio_smoke"
    assert not any(result["cleanup"].values())


def test_the_status_comes_from_the_counts():
    done = Proof("sse")
    done.check("ok", lambda: None)
    assert done.result()["status"] == "completed"
    assert Proof("sse").result()["status"] == "unknown"


def test_the_proof_is_written_as_latest_and_archived(tmp_path):
    proof = Proof("http")
    proof.check("ok", lambda: None)
    latest, archive = write_proof(proof.result(), out=None, cwd=tmp_path)
    assert latest == tmp_path / ".lemon" / "proofs" / "mcp-http-latest.json"
    assert archive.parent == latest.parent and archive.name.startswith("mcp-http-smoke-")
    assert json.loads(latest.read_text()) == json.loads(archive.read_text())
    chosen = tmp_path / "elsewhere" / "p.json"
    assert write_proof(proof.result(), out=chosen, cwd=tmp_path)[0] == chosen and chosen.exists()


def test_checks_run_in_a_throw_away_agent_dir_and_the_real_one_comes_back(agent_dir):
    before = os.environ["LEMON_AGENT_DIR"]
    with private_state() as tmp:
        assert os.environ["LEMON_AGENT_DIR"] == str(tmp) != before
        assert os.environ["LEMON_SECRETS_BACKEND"] == "file"
        (tmp / "approvals.db").write_text("x")
    assert os.environ["LEMON_AGENT_DIR"] == before
    assert "LEMON_SECRETS_BACKEND" not in os.environ and not tmp.exists()


def test_expectations_fail_the_check_with_what_was_expected():
    expect(True, "never shown")
    with pytest.raises(AssertionError, match="the tool is missing"):
        expect(False, "the tool is missing")

    def blocked() -> None:
        raise McpToolError("resource 'x' is blocked by the filters")

    expect_raises(blocked, "blocked")
    with pytest.raises(AssertionError, match="unexpected error"):
        expect_raises(blocked, "not found")
    with pytest.raises(AssertionError, match="the blocked item was served"):
        expect_raises(lambda: None, "blocked")
    assert hint(ValueError()) == "ValueError"
