"""OAuth through McpSource, configured from mcp.json, against the fixture authorization server."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.cli import main
from lemon_skills.errors import McpToolError
from lemon_skills.mcp.source import McpSource
from lemon_skills.selftest.fixtures.protected import Stack
from tests.helpers import approval_operator as operator
from tests.mcp.oauth_support import ROOT

pytestmark = pytest.mark.usefixtures("trusted_projects")

PUBLIC = "lemon-public"


def configure(project: Path, stack: Stack, oauth: dict[str, Any] | None) -> None:
    entry: dict[str, Any] = {"url": stack.mcp_url}
    if oauth is not None:
        entry["oauth"] = oauth
    (project / ".lemon").mkdir(exist_ok=True)
    doc = {"mcpServers": {"secured": entry}}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture
def source(project: Path) -> Iterator[McpSource]:
    with McpSource(cwd=project) as src:
        yield src


def assert_no_token(text: str, stack: Stack) -> None:
    issued = stack.auth.issued_secrets()
    for token in issued:
        assert token not in text


def test_client_credentials_from_mcp_json_list_and_call_tools(make_stack, project, source):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    configure(project, stack, {"client_id": "lemon", "client_secret": "secret", "scope": "tools"})
    names = {t.name for t in source.discover_tools()}
    assert "mcp_secured_secured_echo" in names
    assert source.call_tool("mcp_secured_secured_echo", {"message": "hi"}).text == "echo:hi"
    [token] = stack.auth.token_requests()
    assert token.form["grant_type"] == "client_credentials"
    assert token.form["resource"] == stack.mcp_url
    for request in stack.metadata_requests():
        assert "authorization" not in request.headers
    status = source.status()["servers"]["secured"]
    assert status["connected"] and status["oauth"]["has_access_token"]
    assert status["oauth"]["cache"] == "memory"
    assert_no_token(json.dumps(source.status()), stack)


def test_tokens_are_kept_only_where_configured(make_stack, project, source, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    configure(project, stack, {"client_id": "lemon", "client_secret": "secret"})
    assert source.call_tool("mcp_secured_secured_echo", {"message": "x"}).text == "echo:x"
    assert not (agent_dir / "secrets.json").exists()


def test_status_explains_a_missing_oauth_config_and_a_refused_secret(
    make_stack, project, source, caplog
):
    caplog.set_level(logging.DEBUG)
    stack = make_stack()
    stack.auth.add_client("lemon", secret="right")
    configure(project, stack, None)
    assert source.discover_tools() == []
    status = source.status()["servers"]["secured"]
    assert status["last_error"].startswith(f"authorization required by {stack.auth.issuer}")
    assert 'add an "oauth" object' in status["last_error"]
    required = status["auth_required"]
    assert required["resource"] == stack.mcp_url
    assert required["authorization_servers"] == [stack.auth.issuer]
    assert stack.auth.token_requests() == []

    configure(project, stack, {"client_id": "lemon", "client_secret": "wrong-secret-value"})
    assert source.discover_tools() == []
    status = source.status()["servers"]["secured"]
    assert status["last_error"] == "token endpoint refused: invalid_client"
    assert "auth_required" not in status
    assert "wrong-secret-value" not in json.dumps(source.status())
    assert "wrong-secret-value" not in caplog.text


def run_lemon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lemon_skills", *args],
        env=dict(os.environ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_pkce_login_approved_from_another_process_then_resumed_after_a_restart(
    make_stack, project, source, agent_dir, caplog
):
    caplog.set_level(logging.DEBUG)
    stack = make_stack()
    stack.auth.add_client(PUBLIC, redirect_uris=("http://127.0.0.1:1/callback",))
    oauth = {
        "flow": "authorization_code_pkce",
        "client_id": PUBLIC,
        "redirect_uri": "http://127.0.0.1:0/callback",
        "scope": "tools",
        "token_secret": "mcp-secured-tokens",
    }
    configure(project, stack, oauth)
    op = operator.spawn("approve", "--tool", "mcp_secured_oauth", "--login")
    assert "mcp_secured_secured_echo" in {t.name for t in source.discover_tools()}
    approval = operator.finish(op)
    [token] = stack.auth.token_requests()
    assert token.form["grant_type"] == "authorization_code"
    assert token.form["code_verifier"] not in json.dumps(approval)
    action = approval["action"]
    assert isinstance(action, dict)
    assert action["authorization_url"].startswith(stack.auth.issuer + "/authorize?")
    status = source.status()
    assert status["servers"]["secured"]["oauth"]["cache"].endswith("#mcp-secured-tokens")
    assert_no_token(json.dumps(status) + caplog.text, stack)
    secrets_file = agent_dir / "secrets.json"
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    source.close()

    seen_before = (len(stack.auth.requests), len(stack.metadata_requests()))
    bearer = stack.bearers()[-1]
    done = run_lemon(
        "mcp", "call", "mcp_secured_secured_echo", "--args", '{"message": "again"}',
        "--cwd", str(project), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "echo:again"
    assert (len(stack.auth.requests), len(stack.metadata_requests())) == seen_before
    assert stack.bearers()[-1] == bearer
    assert len(ApprovalStore().list(status=None)) == 1  # nobody was asked again
    assert_no_token(done.stdout + done.stderr, stack)


def test_a_denied_login_is_reported_and_not_retried_until_refresh(
    make_stack, project, source, agent_dir
):
    stack = make_stack()
    stack.auth.add_client(PUBLIC, redirect_uris=("http://127.0.0.1:1/callback",))
    oauth = {"client_id": PUBLIC, "redirect_uri": "http://127.0.0.1:0/callback"}
    configure(project, stack, oauth)
    op = operator.spawn("deny", "--tool", "mcp_secured_oauth")
    assert source.discover_tools() == []
    operator.finish(op)
    status = source.status()["servers"]["secured"]
    assert status["last_error"] == "authorization was denied by the operator"
    assert status["retry_in_ms"] is None
    assert source.discover_tools() == []
    assert len(ApprovalStore().list(status=None)) == 1
    assert stack.auth.token_requests() == []

    op = operator.spawn("approve", "--tool", "mcp_secured_oauth", "--login")
    source.refresh()
    operator.finish(op)
    assert source.call_tool("mcp_secured_secured_echo", {"message": "in"}).text == "echo:in"
    assert source.status()["servers"]["secured"]["last_error"] is None


def test_the_cli_shows_the_sign_in_url_and_the_denial(make_stack, project, agent_dir, capsys):
    stack = make_stack()
    stack.auth.add_client(PUBLIC, redirect_uris=("http://127.0.0.1:1/callback",))
    configure(project, stack, {"client_id": PUBLIC, "redirect_uri": "http://127.0.0.1:0/cb"})
    op = operator.spawn("deny", "--tool", "mcp_secured_oauth")
    code = main(["mcp", "status", "--json", "--cwd", str(project)])
    seen = operator.finish(op)
    out, err = capsys.readouterr()
    assert code == 1
    assert f"MCP server {stack.mcp_url} needs a sign-in" in err
    action = seen["action"]
    assert isinstance(action, dict)
    assert action["authorization_url"] in err
    status = json.loads(out)["servers"]["secured"]
    assert status["last_error"] == "authorization was denied by the operator"


def test_a_failed_reauthorization_mid_session_is_reported_precisely(make_stack, project, source):
    stack = make_stack()
    client = stack.auth.add_client("lemon", secret="secret")
    configure(project, stack, {"client_id": "lemon", "client_secret": "secret"})
    assert source.call_tool("mcp_secured_secured_echo", {"message": "a"}).text == "echo:a"
    stack.auth.revoke_access_tokens()
    client.secret = "rotated-by-the-admin"
    with pytest.raises(McpToolError, match="failed: token endpoint refused: invalid_client"):
        source.call_tool("mcp_secured_secured_echo", {"message": "b"})
    status = source.status()["servers"]["secured"]
    assert status["last_error"] == "token endpoint refused: invalid_client"
    assert_no_token(json.dumps(status), stack)


def test_a_refused_static_authorization_header_is_named(make_stack, project, source):
    stack = make_stack()
    entry = {"url": stack.mcp_url, "headers": {"Authorization": "Bearer expired-token"}}
    (project / ".lemon").mkdir(exist_ok=True)
    doc = {"mcpServers": {"secured": entry}}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    assert source.discover_tools() == []
    error = source.status()["servers"]["secured"]["last_error"]
    assert error.startswith("the server refused the Authorization header of its config entry")
    assert '"headers"' in error and "expired-token" not in error
