from __future__ import annotations

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.mcp.oauth.options import OAuthSettings, parse_oauth, validate_oauth


def test_client_credentials_with_kebab_keys_and_scopes_list():
    settings = parse_oauth(
        {
            "client-id": "c",
            "client-secret": "s",
            "scopes": ["tools", "prompts"],
            "token-auth-method": "basic",
            "token_secret": "tok",
        }
    )
    assert settings == OAuthSettings(
        flow="client_credentials",
        client_id="c",
        client_secret="s",
        token_secret="tok",
        scope="tools prompts",
        token_auth_method="client_secret_basic",
    )
    assert "'s'" not in repr(settings)


def test_pkce_alias_gets_the_same_flow_and_defaults():
    settings = parse_oauth(
        {"flow": "pkce", "client_id": "p", "redirect_uri": "http://127.0.0.1:9/cb"}
    )
    assert settings.flow == "authorization_code_pkce"
    assert settings.token_auth_method == "none"
    assert settings.authorization_approval is True
    assert settings.authorization_timeout == 300.0
    off = parse_oauth(
        {
            "redirect_uri": "http://127.0.0.1:9/cb",
            "authorization_approval": "false",
            "authorization_timeout_ms": 1500,
        }
    )
    assert off.flow == "authorization_code_pkce"
    assert off.authorization_approval is False
    assert off.authorization_timeout == 1.5


def test_every_problem_is_reported():
    assert validate_oauth(
        {
            "client_id": " ",
            "flow": "implicit",
            "redirect_uri": 5,
            "scope": ["x"],
            "scopes": "x",
            "authorization_timeout_ms": 0,
            "token_auth_method": "jwt",
            "issuer": "ftp://x",
        }
    ) == [
        "oauth.client_id must be a non-empty string",
        "oauth.flow must be client_credentials, authorization_code_pkce, jwt_bearer or enterprise",
        "oauth.redirect_uri must be a string",
        "oauth.scope must be a string",
        "oauth.scopes must be a list of strings",
        "oauth.authorization_timeout_ms must be a positive integer",
        "oauth.token_auth_method must be client_secret_post or client_secret_basic",
        "oauth.issuer must be an http(s) URL",
    ]
    assert validate_oauth([]) == ["oauth must be an object"]
    assert validate_oauth({"client_id": "c"}) == [
        "oauth needs client_secret (client credentials) or redirect_uri (PKCE)"
    ]
    assert validate_oauth({"flow": "client_credentials", "client_id": "c"}) == [
        "oauth client credentials need client_id and client_secret"
    ]
    with pytest.raises(ConfigError, match="oauth.flow"):
        parse_oauth({"flow": "nope"})
