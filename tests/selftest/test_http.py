"""The HTTP proof's own checks (the wire format and the OAuth discovery) pass against the
fixture servers, which run in threads; the whole 24-check proof runs in the slow suite."""

from __future__ import annotations

from typing import Any

from lemon_skills.selftest import http
from lemon_skills.selftest.proof import Proof, private_state


def test_the_wire_and_discovery_checks_pass_and_share_what_they_found():
    proof = Proof("http")
    found: dict[str, Any] = {}
    with private_state():
        proof.check("wire", http._wire)
        proof.check("challenge", lambda: http._challenge(found))
        proof.check("metadata", lambda: http._as_metadata(found))
    assert [(c["name"], c["status"]) for c in proof.checks] == [
        ("wire", "completed"),
        ("challenge", "completed"),
        ("metadata", "completed"),
    ]
    assert found["expected_issuer"] and found["authorization_servers"] == [found["expected_issuer"]]


def test_the_metadata_check_fails_without_the_challenge_it_builds_on():
    proof = Proof("http")
    proof.check("metadata", lambda: http._as_metadata({}))
    assert proof.checks[0]["status"] == "failed"
