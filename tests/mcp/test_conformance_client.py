from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
def test_every_conformance_client_scenario_passes_or_is_an_expected_failure(tmp_path: Path):
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to install the conformance suite")
    prefix = os.environ.get("LEMON_CONFORMANCE_PREFIX", str(ROOT / ".conformance"))
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "conformance.sh"), str(tmp_path / "results")],
        env={**os.environ, "LEMON_CONFORMANCE_PREFIX": prefix, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.splitlines()[-1]
    assert summary.endswith(", 0 unexpected"), summary
    listed = [line for line in done.stdout.splitlines() if line.startswith(("pass ", "xfail "))]
    assert len(listed) >= 26  # every client scenario of 0.1.x ran


def test_help_prints_usage_and_an_option_is_not_taken_for_a_url(capsys):
    from lemon_skills.mcp.conformance_client import main

    assert main(["--help"]) == 0
    assert capsys.readouterr().out.startswith(
        "usage: python -m lemon_skills.mcp.conformance_client"
    )
    assert main(["--verbose"]) == 2
    assert "usage:" in capsys.readouterr().err
