"""``run_smoke``: the SSE proof (fixture servers in threads) passes every check in a private
agent dir; the stdio and HTTP proofs run whole in the slow suite (tests/cli/test_mcp.py)."""

from __future__ import annotations

import os

from lemon_skills.selftest import run_smoke


def test_the_sse_proof_passes_every_check_and_leaves_no_state(agent_dir):
    before = os.environ["LEMON_AGENT_DIR"]
    proof = run_smoke("sse")
    assert proof["status"] == "completed", [
        c for c in proof["checks"] if c["status"] != "completed"
    ]
    assert (proof["proof"], proof["completed_count"], proof["failed_count"]) == (
        "mcp_sse_smoke",
        14,
        0,
    )
    assert os.environ["LEMON_AGENT_DIR"] == before and not agent_dir.exists()
