"""The checks the smoke proofs share pass against the fixture server and catch a server that
behaves otherwise (the fixture is served in-process, or over HTTP in a thread)."""

from __future__ import annotations

import pytest

from lemon_skills.mcp.config.parse import parse_server
from lemon_skills.selftest.checks import client_checks, degraded, fixture_entries, source_checks
from lemon_skills.selftest.proof import Proof
from tests.helpers.mcp import rich

pytestmark = pytest.mark.usefixtures("in_memory")


def statuses(proof: Proof) -> dict[str, str]:
    return {c["name"]: c["status"] for c in proof.checks}


def test_the_source_checks_pass_against_the_fixture():
    proof = Proof("stdio")
    with fixture_entries("stdio") as make:
        source_checks(proof, "stdio", make, server="stdio")
        degraded(make)
    assert statuses(proof) == {
        "mcp_source_discovers_prefixed_stdio_tools": "completed",
        "mcp_source_invokes_resource_and_prompt_utilities": "completed",
        "mcp_registry_exposes_prefixed_stdio_tools": "completed",
        "mcp_source_applies_stdio_filters": "completed",
    }


def test_a_server_that_offers_more_than_the_fixture_fails_the_utility_check():
    def make(name: str, **extra: object) -> object:
        return parse_server(rich(name) | extra)

    proof = Proof("stdio")
    source_checks(proof, "stdio", make, server="stdio")  # type: ignore[arg-type]
    got = statuses(proof)
    assert got["mcp_source_invokes_resource_and_prompt_utilities"] == "failed"
    assert got["mcp_source_discovers_prefixed_stdio_tools"] == "completed"
    failed = next(c for c in proof.checks if c["status"] == "failed")
    assert failed["failure_hint"] == "AssertionError: resources_list"


def test_the_client_checks_run_in_the_order_of_their_transport():
    proof = Proof("http")
    with fixture_entries("http") as make:
        client_checks(proof, "http", make("http"))
    names = [c["name"] for c in proof.checks]
    assert names[:4] == [
        "mcp_http_client_initializes",
        "mcp_http_lists_tools",
        "mcp_http_calls_tool_success",
        "mcp_http_calls_tool_error",
    ]
    assert len(names) == 8 and set(statuses(proof).values()) == {"completed"}
