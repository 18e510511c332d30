from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lemon_skills.mcp.conformance_client import oauth_config, planned_calls
from lemon_skills.mcp.oauth.options import validate_oauth
from tests.mcp.oauth_support import ROOT

#: Runs the client as a subprocess per scenario: run by .ci/run (pytest -m slow).
pytestmark = pytest.mark.slow


def run_client(url: str, scenario: str, context: dict[str, str] | None = None):
    env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": scenario}
    if context is not None:
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps(context)
    return subprocess.run(
        [sys.executable, "-m", "lemon_skills.mcp.conformance_client", url],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_client_credentials_scenario_against_the_fixture_servers(make_stack):
    stack = make_stack()
    stack.auth.add_client("conf", secret="conf-secret")
    done = run_client(
        stack.mcp_url,
        "auth/client-credentials-basic",
        {"client_id": "conf", "client_secret": "conf-secret"},
    )
    assert done.returncode == 0, done.stderr
    [token] = stack.auth.token_requests()
    assert (
        token.headers["authorization"] == "Basic " + base64.b64encode(b"conf:conf-secret").decode()
    )
    assert stack.bearers()


def test_authorization_code_scenario_logs_in_headlessly(make_stack):
    stack = make_stack()
    done = run_client(stack.mcp_url, "auth/metadata-default")
    assert done.returncode == 0, done.stderr
    grants = [r.form["grant_type"] for r in stack.auth.token_requests()]
    assert grants == ["authorization_code"]
    assert any(r.path.endswith("/register") for r in stack.auth.requests)


def test_a_server_that_cannot_be_used_is_a_failure_with_its_reason(make_stack):
    stack = make_stack()
    done = run_client(stack.mcp_url, "initialize")
    assert done.returncode == 1
    assert "authorization required by " + stack.auth.issuer in done.stderr


@pytest.mark.parametrize(
    ("scenario", "context"),
    [
        ("auth/dpop", {}),
        ("auth/wif-jwt-bearer", {"client_id": "w", "valid_jwt": "a.b.c"}),
        (
            "auth/enterprise-managed-authorization",
            {
                "client_id": "c",
                "client_secret": "s",
                "idp_client_id": "i",
                "idp_id_token": "x.y.z",
                "idp_token_endpoint": "http://127.0.0.1:1/token",
            },
        ),
    ],
)
def test_scenario_context_becomes_a_valid_oauth_config(scenario, context, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    config = oauth_config(scenario, context, workdir)
    assert config is not None and validate_oauth(config) == []
    for jwt in ("valid_jwt", "idp_id_token"):
        if jwt in context:
            [written] = workdir.iterdir()
            assert written.read_text() == context[jwt]


def test_planned_calls_follow_the_scenario():
    schemas = {
        "valid_tool": {
            "type": "object",
            "properties": {"region": {"type": "string"}},
            "required": ["region"],
        },
        "json_schema_2020_12_tool": {"$defs": {"a": {}}, "type": "object"},
        "json_schema_echo": {"type": "object"},
    }
    assert planned_calls(
        "http-invalid-tool-headers", {}, {"valid_tool": schemas["valid_tool"]}
    ) == [("valid_tool", {"region": "sample"})]
    assert planned_calls("json-schema-2020-12-preservation", {}, schemas) == [
        ("json_schema_echo", {"schema": {"$defs": {"a": {}}, "type": "object"}})
    ]
    calls = {"toolCalls": [{"name": "t", "arguments": {"v": None}}]}
    assert planned_calls("http-custom-headers", calls, {}) == [("t", {"v": None})]
    assert planned_calls("initialize", {}, schemas) == []


def test_a_missing_url_is_a_usage_error():
    done = subprocess.run(
        [sys.executable, "-m", "lemon_skills.mcp.conformance_client"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "usage" in done.stderr


@pytest.mark.integration
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    ("suite", "scenarios"),
    [("", 48), ("@modelcontextprotocol/conformance@0.1.16", 26)],
    ids=["pinned", "0.1.16"],
)
def test_every_conformance_client_scenario_passes_or_is_an_expected_failure(
    tmp_path: Path, suite: str, scenarios: int
):
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to install the conformance suite")
    prefix = os.environ.get("LEMON_CONFORMANCE_PREFIX", str(ROOT / ".conformance"))
    env = {**os.environ, "LEMON_CONFORMANCE_PREFIX": prefix, "PYTHON": sys.executable}
    if suite:
        env["LEMON_CONFORMANCE_SUITE"] = suite
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "conformance.sh"), str(tmp_path / "results")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert not [line for line in lines if " FAIL " in line or " STALE " in line]
    unpinned = [line for line in lines if line.startswith("[latest] ")]
    assert len(unpinned) >= scenarios  # every client scenario of the suite ran
    assert all(line.split()[1] in ("pass", "xfail") for line in unpinned)


def test_help_prints_usage_and_an_option_is_not_taken_for_a_url(capsys):
    from lemon_skills.mcp.conformance_client import main

    assert main(["--help"]) == 0
    assert capsys.readouterr().out.startswith(
        "usage: python -m lemon_skills.mcp.conformance_client"
    )
    assert main(["--verbose"]) == 2
    assert "usage:" in capsys.readouterr().err
