"""The smoke proof's sampling checks pass against the sampling fixture (served in-process):
the delegate answers, a reviewer sees only counts and a hash, an operator approves."""

from __future__ import annotations

import pytest

from lemon_skills.selftest.proof import Proof, private_state
from lemon_skills.selftest.sampling import sampling_checks

pytestmark = pytest.mark.usefixtures("in_memory")


def test_the_three_sampling_checks_pass():
    proof = Proof("stdio")
    with private_state():
        sampling_checks(proof)
    assert [(c["name"], c["status"]) for c in proof.checks] == [
        ("mcp_stdio_sampling_callback_wrapper", "completed"),
        ("mcp_stdio_sampling_reviewed_model_policy", "completed"),
        ("mcp_stdio_sampling_ops_approval_bridge", "completed"),
    ]
