from __future__ import annotations

import json
import stat
import time

import keyring
from keyring.backends import fail

from lemon_skills import secrets
from lemon_skills.mcp.oauth.provider import build_auth
from lemon_skills.mcp.oauth.tokens import CachedTokens
from tests.helpers import approval_operator as operator
from tests.mcp.oauth_support import client_process, run_echo
from tests.test_secrets import MemoryKeyring

CC = {"client_id": "lemon", "client_secret": "secret", "scope": "tools"}


def cached(agent_dir, name: str) -> dict:
    entry = json.loads((agent_dir / "secrets.json").read_text(encoding="utf-8"))["secrets"][name]
    assert entry["provider"] == "mcp_oauth"
    return json.loads(entry["value"])


def test_a_new_process_resumes_from_the_cache_without_any_oauth_request(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret", issue_refresh=True)
    config = {**CC, "token_secret": "mcp-secured-tokens"}
    before = time.time()
    assert run_echo(stack.mcp_url, build_auth("secured", stack.mcp_url, config)) == ["echo:m0"]

    path = agent_dir / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    record = cached(agent_dir, "mcp-secured-tokens")
    [access] = stack.auth.access_tokens
    [refresh] = stack.auth.refresh_tokens
    assert record["access_token"] == access
    assert record["refresh_token"] == refresh
    assert before + 3600 - 5 <= record["expires_at"] <= time.time() + 3600
    assert record["token_endpoint"] == stack.auth.issuer + "/token"
    assert record["issuer"] == stack.auth.issuer
    assert record["client_id"] == "lemon"
    assert record["scope"] == "tools"
    assert record["resource"] == stack.mcp_url
    assert record["version"] == 1

    oauth_before = len(stack.auth.requests)
    prm_before = len(stack.metadata_requests())
    mcp_before = len(stack.mcp_requests())
    done = client_process(stack.mcp_url, json.dumps(config), count=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["echo:m0", "echo:m1"]
    assert len(stack.auth.requests) == oauth_before  # no metadata, no token request
    assert len(stack.metadata_requests()) == prm_before
    resumed = stack.mcp_requests()[mcp_before:]
    assert resumed[0].headers["authorization"] == f"Bearer {access}"  # even the first one
    assert all(r.headers.get("authorization") == f"Bearer {access}" for r in resumed)


def test_after_a_restart_an_expired_token_is_refreshed_at_the_cached_endpoint(
    make_stack, agent_dir
):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret", issue_refresh=True)
    config = {**CC, "token_secret": "mcp-secured-tokens"}
    run_echo(stack.mcp_url, build_auth("secured", stack.mcp_url, config))
    record = cached(agent_dir, "mcp-secured-tokens")
    secrets.set("mcp-secured-tokens", json.dumps({**record, "expires_at": time.time() - 10}))
    metadata_before = len(stack.metadata_requests())

    fresh = build_auth("secured", stack.mcp_url, config)  # a restarted process: new objects
    assert run_echo(stack.mcp_url, fresh) == ["echo:m0"]
    grants = [r.form["grant_type"] for r in stack.auth.token_requests()]
    assert grants == ["client_credentials", "refresh_token"]
    assert stack.auth.token_requests()[1].form["refresh_token"] == record["refresh_token"]
    assert len(stack.metadata_requests()) == metadata_before
    rotated = cached(agent_dir, "mcp-secured-tokens")
    assert rotated["refresh_token"] != record["refresh_token"]
    assert rotated["expires_at"] > time.time()


def test_a_pkce_login_is_resumed_without_asking_the_operator_again(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon-public", redirect_uris=("http://127.0.0.1:1/callback",))
    config = {
        "flow": "authorization_code_pkce",
        "client_id": "lemon-public",
        "redirect_uri": "http://127.0.0.1:0/callback",
        "scope": "tools",
        "token_secret": "mcp-pkce",
    }
    op = operator.spawn("approve", "--login")
    run_echo(stack.mcp_url, build_auth("secured", stack.mcp_url, config))
    operator.finish(op)
    requests_before = len(stack.auth.requests)
    done = client_process(stack.mcp_url, json.dumps(config))
    assert done.returncode == 0, done.stderr
    assert len(stack.auth.requests) == requests_before
    assert cached(agent_dir, "mcp-pkce")["refresh_token"]


def test_without_token_secret_nothing_is_persisted(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    auth = build_auth("secured", stack.mcp_url, CC)
    run_echo(stack.mcp_url, auth)
    assert not (agent_dir / "secrets.json").exists()
    assert auth.describe()["cache"] == "memory"


def test_with_a_usable_keyring_the_cache_is_a_keyring_entry_only(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    store = MemoryKeyring()
    keyring.set_keyring(store)
    try:
        auth = build_auth("secured", stack.mcp_url, {**CC, "token_secret": "kr-tokens"})
        run_echo(stack.mcp_url, auth)
        assert list(store.store) == [(secrets.KEYRING_SERVICE, "kr-tokens")]
        record = json.loads(store.store[(secrets.KEYRING_SERVICE, "kr-tokens")])
        assert record["access_token"] in stack.auth.access_tokens
        assert auth.describe()["cache"].startswith("keyring:")
        assert not (agent_dir / "secrets.json").exists()
    finally:
        keyring.set_keyring(fail.Keyring())


def test_cached_tokens_for_another_resource_are_never_sent(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    foreign = CachedTokens(
        access_token="token-for-another-server",
        resource="http://127.0.0.1:1/other",
        client_id="lemon",
    )
    secrets.set("shared-name", foreign.to_json())
    auth = build_auth("secured", stack.mcp_url, {**CC, "token_secret": "shared-name"})
    assert run_echo(stack.mcp_url, auth) == ["echo:m0"]
    assert "token-for-another-server" not in stack.bearers()
    assert len(stack.auth.token_requests()) == 1
    assert cached(agent_dir, "shared-name")["resource"] == stack.mcp_url


def test_a_corrupt_cache_entry_is_ignored_not_fatal(make_stack, agent_dir):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    secrets.set("bad-cache", "{not json")
    auth = build_auth("secured", stack.mcp_url, {**CC, "token_secret": "bad-cache"})
    assert run_echo(stack.mcp_url, auth) == ["echo:m0"]
    assert cached(agent_dir, "bad-cache")["access_token"] in stack.auth.access_tokens
