from __future__ import annotations

import base64
import hashlib
import json
import logging
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.errors import ConfigError, McpAuthError
from lemon_skills.mcp.oauth.provider import (
    AuthorizationRequest,
    build_auth,
    check_authorization_url,
)
from tests.helpers import approval_operator as operator
from tests.mcp.oauth_support import failure, run_echo

PUBLIC = "lemon-public"


def pkce_config(**extra):
    return {
        "flow": "authorization_code_pkce",
        "client_id": PUBLIC,
        "redirect_uri": "http://127.0.0.1:0/callback",
        "scope": "tools",
        **extra,
    }


def public_client(stack):
    stack.auth.add_client(PUBLIC, redirect_uris=("http://127.0.0.1:1/callback",))


def test_loopback_login_behind_an_operator_approval_from_another_process(
    make_stack, agent_dir, caplog
):
    caplog.set_level(logging.DEBUG)
    stack = make_stack()
    public_client(stack)
    auth = build_auth("Secured MCP", stack.mcp_url, pkce_config())
    op = operator.spawn("approve", "--tool", "mcp_secured_mcp_oauth", "--login")
    assert run_echo(stack.mcp_url, auth) == ["echo:m0"]
    approval = operator.finish(op)

    action = approval["action"]
    assert isinstance(action, dict)
    assert approval["tool"] == "mcp_secured_mcp_oauth"
    assert approval["run_id"] == "mcp-oauth-secured_mcp"
    assert approval["session_key"] == "agent:mcp:oauth"
    assert action["type"] == "mcp_oauth_authorization"
    assert action["client_id"] == PUBLIC
    assert action["resource"] == stack.mcp_url
    assert action["scope"] == "tools"
    url = urlsplit(action["authorization_url"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == stack.auth.issuer + "/authorize"
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert query["response_type"] == "code"
    assert query["code_challenge_method"] == "S256"
    assert query["resource"] == stack.mcp_url
    assert query["redirect_uri"] == action["redirect_uri"]
    assert urlsplit(query["redirect_uri"]).port not in (None, 0)  # the listener's free port
    assert action["state_hash"] == hashlib.sha256(query["state"].encode()).hexdigest()[:16]

    [token] = stack.auth.token_requests()
    verifier = token.form["code_verifier"]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    assert challenge.decode() == query["code_challenge"]
    assert token.form["grant_type"] == "authorization_code"
    assert token.form["redirect_uri"] == query["redirect_uri"]
    assert token.form["resource"] == stack.mcp_url
    assert token.form["client_id"] == PUBLIC
    # the verifier is nowhere an operator or a log could see it
    assert verifier not in json.dumps(approval)
    for path in agent_dir.glob("approvals.db*"):
        assert verifier.encode() not in path.read_bytes()
    assert verifier not in caplog.text
    for secret in stack.auth.issued_secrets():
        assert secret not in caplog.text
    assert ApprovalStore().get(approval["id"]).status == "approved"


def test_an_operator_denial_stops_the_login(make_stack, agent_dir):
    stack = make_stack()
    public_client(stack)
    op = operator.spawn("deny")
    error = failure(stack.mcp_url, build_auth("secured", stack.mcp_url, pkce_config()))
    operator.finish(op)
    assert isinstance(error, McpAuthError)
    assert "denied by the operator" in str(error)
    assert stack.auth.token_requests() == []


def test_an_unanswered_login_times_out_and_withdraws_the_approval(make_stack, agent_dir):
    stack = make_stack()
    public_client(stack)
    auth = build_auth("secured", stack.mcp_url, pkce_config(authorization_timeout_ms=300))
    error = failure(stack.mcp_url, auth)
    assert isinstance(error, McpAuthError)
    assert "did not complete within 0.3s" in str(error)
    [approval] = ApprovalStore().list(status=None)
    assert approval.status in ("cancelled", "expired")


@pytest.mark.parametrize("methods", [None, ["plain"]], ids=["absent", "plain-only"])
def test_an_authorization_server_without_s256_is_refused(make_stack, agent_dir, methods):
    stack = make_stack(pkce_methods=methods)
    public_client(stack)
    error = failure(stack.mcp_url, build_auth("secured", stack.mcp_url, pkce_config()))
    assert isinstance(error, McpAuthError)
    assert "does not offer PKCE S256" in str(error)
    assert ApprovalStore().list(status=None) == []
    assert [r for r in stack.auth.requests if r.path.endswith("/authorize")] == []


def test_a_plain_http_authorization_endpoint_off_loopback_is_refused(make_stack, agent_dir):
    stack = make_stack(authorization_endpoint="http://login.example.com/authorize")
    public_client(stack)
    error = failure(stack.mcp_url, build_auth("secured", stack.mcp_url, pkce_config()))
    assert isinstance(error, McpAuthError)
    assert "https is required off loopback" in str(error)
    assert ApprovalStore().list(status=None) == []


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "ftp://h/authorize",
        "http://example.com/authorize",
        "https:///no-host",
    ],
)
def test_only_http_s_authorization_urls_are_accepted(url):
    with pytest.raises(McpAuthError, match="refusing"):
        check_authorization_url(url)


def test_https_and_loopback_http_authorization_urls_are_accepted():
    check_authorization_url("https://login.example.com/authorize?x=1")
    check_authorization_url("http://127.0.0.1:9/authorize")
    check_authorization_url("http://localhost/authorize")


def test_a_host_code_provider_replaces_the_listener(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client(PUBLIC, redirect_uris=("http://127.0.0.1/callback",))
    seen: list[AuthorizationRequest] = []

    async def provider(request: AuthorizationRequest):
        seen.append(request)
        async with httpx2.AsyncClient() as browser:
            consent = await browser.get(request.authorization_url)
        q = parse_qs(urlsplit(consent.headers["location"]).query)
        return {"code": q["code"][0], "state": q["state"][0]}

    config = pkce_config(redirect_uri="http://127.0.0.1/callback")
    assert run_echo(
        stack.mcp_url, build_auth("secured", stack.mcp_url, config, code_provider=provider)
    ) == ["echo:m0"]
    [request] = seen
    assert request.authorization_endpoint == stack.auth.issuer + "/authorize"
    assert request.client_id == PUBLIC
    assert request.redirect_uri == "http://127.0.0.1/callback"
    assert request.scope == "tools"
    assert request.resource == stack.mcp_url
    assert request.code_challenge_method == "S256"
    assert not hasattr(request, "code_verifier")
    assert ApprovalStore().list(status=None) == []  # the host owns the login


def test_a_code_for_another_state_is_refused(make_stack):
    stack = make_stack()
    stack.auth.add_client(PUBLIC, redirect_uris=("http://127.0.0.1/callback",))

    async def provider(request: AuthorizationRequest):
        return {"code": "whatever", "state": "not-the-state"}

    auth = build_auth(
        "secured",
        stack.mcp_url,
        pkce_config(redirect_uri="http://127.0.0.1/callback"),
        code_provider=provider,
    )
    error = failure(stack.mcp_url, auth)
    assert isinstance(error, McpAuthError)
    assert "state did not match" in str(error)
    assert "not-the-state" not in str(error)
    assert stack.auth.token_requests() == []


def test_without_a_client_id_the_client_registers_dynamically(make_stack, agent_dir):
    stack = make_stack()
    config = {
        "flow": "pkce",
        "redirect_uri": "http://127.0.0.1:0/callback",
        "scope": "tools",
        "token_secret": "mcp-dcr",
    }
    op = operator.spawn("approve", "--login")
    assert run_echo(stack.mcp_url, build_auth("secured", stack.mcp_url, config)) == ["echo:m0"]
    operator.finish(op)
    [register] = [r for r in stack.auth.requests if r.path.endswith("/register")]
    client_id = stack.auth.token_requests()[0].form["client_id"]
    assert client_id.startswith("dcr-")
    cached = json.loads((agent_dir / "secrets.json").read_text())["secrets"]["mcp-dcr"]["value"]
    assert json.loads(cached)["client_info"]["client_id"] == client_id
    assert register.method == "POST"


def test_the_listener_needs_a_loopback_redirect_uri():
    with pytest.raises(ConfigError, match="redirect_uri"):
        build_auth("s", "http://127.0.0.1:1/mcp", pkce_config(redirect_uri="https://app/cb"))
    with pytest.raises(ConfigError, match="explicit port"):
        build_auth("s", "http://127.0.0.1:1/mcp", pkce_config(redirect_uri="http://127.0.0.1/cb"))


def test_a_revoked_login_is_refreshed_without_asking_the_operator_again(make_stack, agent_dir):
    stack = make_stack()
    public_client(stack)
    auth = build_auth("secured", stack.mcp_url, pkce_config())
    op = operator.spawn("approve", "--login")

    def revoke(i: int) -> None:
        if i == 1:
            stack.auth.revoke_access_tokens()

    assert run_echo(stack.mcp_url, auth, count=2, between=revoke) == ["echo:m0", "echo:m1"]
    operator.finish(op)
    grants = [r.form["grant_type"] for r in stack.auth.token_requests()]
    assert grants == ["authorization_code", "refresh_token"]
    assert len(ApprovalStore().list(status=None)) == 1
    assert len([r for r in stack.auth.requests if r.path.endswith("/authorize")]) == 1
