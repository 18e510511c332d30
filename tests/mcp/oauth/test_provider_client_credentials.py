from __future__ import annotations

import base64
import logging

import pytest
from mcp.shared.exceptions import MCPError

from lemon_skills.errors import ConfigError, McpAuthError
from lemon_skills.mcp.oauth.provider import build_auth
from tests.mcp.oauth_support import failure, run_echo

CC = {"client_id": "lemon", "client_secret": "secret", "scope": "tools prompts"}


def test_client_secret_post_discovers_without_forwarding_headers_or_tokens(make_stack):
    stack = make_stack(scopes=("tools",))
    stack.auth.add_client("lemon", secret="secret")
    auth = build_auth("secured", stack.mcp_url, CC)
    assert run_echo(stack.mcp_url, auth, count=2, headers={"x-api-key": "k-123"}) == [
        "echo:m0",
        "echo:m1",
    ]
    metadata = stack.metadata_requests()
    assert [r.path for r in metadata] == [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server/oauth",
    ]
    for request in metadata:
        assert "authorization" not in request.headers
        assert "x-api-key" not in request.headers
    [token] = stack.auth.token_requests()
    assert token.form == {
        "grant_type": "client_credentials",
        "client_id": "lemon",
        "client_secret": "secret",
        "resource": stack.mcp_url,
        "scope": "tools prompts",
    }
    assert "authorization" not in token.headers
    assert "x-api-key" not in token.headers
    issued = next(iter(stack.auth.access_tokens))
    mcp = stack.mcp_requests()
    assert "authorization" not in mcp[0].headers  # the first try carries no bearer yet
    assert all(r.headers.get("x-api-key") == "k-123" for r in mcp)
    assert set(stack.bearers()) == {issued}


def test_client_secret_basic_sends_credentials_only_in_the_header(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    config = {**CC, "scope": "tools", "token_auth_method": "client_secret_basic"}
    assert run_echo(stack.mcp_url, build_auth("secured", stack.mcp_url, config)) == ["echo:m0"]
    [token] = stack.auth.token_requests()
    assert token.headers["authorization"] == "Basic " + base64.b64encode(b"lemon:secret").decode()
    assert token.form == {
        "grant_type": "client_credentials",
        "resource": stack.mcp_url,
        "scope": "tools",
    }


def test_a_later_401_without_refresh_token_reacquires_once(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    auth = build_auth("secured", stack.mcp_url, CC)
    first: list[str] = []

    def revoke_before_second_call(i: int) -> None:
        if i == 1:
            first.extend(stack.auth.access_tokens)
            stack.auth.revoke_access_tokens()

    assert run_echo(stack.mcp_url, auth, count=2, between=revoke_before_second_call) == [
        "echo:m0",
        "echo:m1",
    ]
    grants = [r.form["grant_type"] for r in stack.auth.token_requests()]
    assert grants == ["client_credentials", "client_credentials"]
    [second] = stack.auth.access_tokens
    assert first != [second]
    assert stack.bearers()[0] == first[0]
    assert stack.bearers()[-1] == second


def test_a_token_the_server_keeps_refusing_is_not_retried_forever(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    stack.auth.honour_tokens = False
    error = failure(stack.mcp_url, build_auth("secured", stack.mcp_url, CC), timeout=20)
    assert isinstance(error, MCPError)  # the second 401 is handed back to the session
    assert len(stack.auth.token_requests()) == 1
    assert len(stack.mcp_requests()) == 2


def test_refresh_token_grant_comes_first_on_a_401_and_rotation_is_kept(make_stack):
    stack = make_stack(scopes=("refresh-lifecycle",))
    stack.auth.add_client("lemon", secret="secret", issue_refresh=True)
    auth = build_auth("secured", stack.mcp_url, {**CC, "scope": "refresh-lifecycle"})
    refresh_tokens: list[set[str]] = []

    def revoke(i: int) -> None:
        refresh_tokens.append(set(stack.auth.refresh_tokens))
        if i > 0:
            stack.auth.revoke_access_tokens()

    assert run_echo(stack.mcp_url, auth, count=3, between=revoke) == [
        "echo:m0",
        "echo:m1",
        "echo:m2",
    ]
    tokens = stack.auth.token_requests()
    assert [r.form["grant_type"] for r in tokens] == [
        "client_credentials",
        "refresh_token",
        "refresh_token",
    ]
    assert tokens[0].form["scope"] == "refresh-lifecycle"
    [rt1], [rt1_again], [rt2] = refresh_tokens
    assert rt1 == rt1_again
    assert tokens[1].form["refresh_token"] == rt1
    assert tokens[2].form["refresh_token"] == rt2 != rt1  # the rotated token was used
    assert tokens[1].form["resource"] == stack.mcp_url
    assert len(stack.metadata_requests()) == 2  # refreshing needed no new discovery


def test_a_failed_refresh_falls_back_to_a_new_grant(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret", issue_refresh=True)
    auth = build_auth("secured", stack.mcp_url, CC)

    def revoke_everything(i: int) -> None:
        if i == 1:
            stack.auth.revoke_access_tokens()
            stack.auth.refresh_tokens.clear()

    assert run_echo(stack.mcp_url, auth, count=2, between=revoke_everything) == [
        "echo:m0",
        "echo:m1",
    ]
    grants = [r.form["grant_type"] for r in stack.auth.token_requests()]
    assert grants == ["client_credentials", "refresh_token", "client_credentials"]


def test_client_secret_secret_comes_from_the_store_or_the_environment(make_stack, monkeypatch):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="from-env")
    config = {"client_id": "lemon", "client_secret_secret": "demo-client-secret"}
    with pytest.raises(ConfigError, match="demo-client-secret"):
        build_auth("secured", stack.mcp_url, config)
    monkeypatch.setenv("DEMO_CLIENT_SECRET", "from-env")
    assert run_echo(stack.mcp_url, build_auth("secured", stack.mcp_url, config)) == ["echo:m0"]
    assert stack.auth.token_requests()[0].form["client_secret"] == "from-env"


def test_wrong_client_secret_is_a_clear_error_without_secrets(make_stack, caplog):
    caplog.set_level(logging.DEBUG)
    stack = make_stack()
    stack.auth.add_client("lemon", secret="right")
    auth = build_auth("secured", stack.mcp_url, {**CC, "client_secret": "wrong-secret-value"})
    error = failure(stack.mcp_url, auth)
    assert isinstance(error, McpAuthError)
    assert "token endpoint refused: invalid_client" in str(error)
    assert auth.describe()["last_error"] == str(error)
    assert "wrong-secret-value" not in caplog.text
    assert "wrong-secret-value" not in str(auth.describe())


def test_a_non_bearer_token_response_is_refused_without_echoing_it(make_stack, caplog):
    caplog.set_level(logging.DEBUG)
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret", issue_refresh=True)
    stack.auth.token_type = "mac"
    auth = build_auth("secured", stack.mcp_url, CC)
    error = failure(stack.mcp_url, auth)
    assert isinstance(error, McpAuthError)
    assert "not a bearer token" in str(error)
    issued = stack.auth.issued_secrets()
    assert issued
    for secret in issued:
        assert secret not in caplog.text
        assert secret not in str(error)


def test_tokens_never_reach_logs_or_status(make_stack, caplog):
    caplog.set_level(logging.DEBUG)
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret", issue_refresh=True)
    auth = build_auth("secured", stack.mcp_url, CC)
    run_echo(
        stack.mcp_url,
        auth,
        count=2,
        between=lambda i: stack.auth.revoke_access_tokens() if i else None,
    )
    status = auth.describe()
    assert status["has_access_token"] and status["has_refresh_token"]
    assert status["token_endpoint"] == stack.auth.issuer + "/token"
    assert status["cache"] == "memory"
    issued = stack.auth.issued_secrets()
    assert len(issued) == 4
    for secret in issued:
        assert secret not in caplog.text
        assert secret not in str(status)
        assert secret not in repr(auth.cache.load())
    assert "'secret'" not in repr(auth.settings)


def test_the_configured_issuer_must_be_the_discovered_one(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    auth = build_auth("secured", stack.mcp_url, {**CC, "issuer": "https://other.example/oauth"})
    error = failure(stack.mcp_url, auth)
    assert isinstance(error, McpAuthError)
    assert "not the configured oauth.issuer" in str(error)
    assert stack.auth.token_requests() == []


def test_both_protocol_eras_authenticate(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    auth = build_auth("secured", stack.mcp_url, CC)
    assert run_echo(stack.mcp_url, auth, mode="auto") == ["echo:m0"]
