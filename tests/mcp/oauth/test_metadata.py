from __future__ import annotations

import anyio

from lemon_skills.errors import McpAuthRequired
from lemon_skills.mcp.oauth.metadata import probe


def test_a_401_without_oauth_is_explained_by_its_metadata(make_stack):
    stack = make_stack(scopes=("tools",))
    requirement = anyio.run(lambda: probe(stack.mcp_url, headers={"x-api-key": "k"}))
    assert requirement is not None
    assert requirement.resource == stack.mcp_url
    assert requirement.authorization_servers == (stack.auth.issuer,)
    assert requirement.www_authenticate and "Bearer" in requirement.www_authenticate
    assert requirement.resource_metadata_url and "oauth-protected-resource" in (
        requirement.resource_metadata_url
    )
    [server] = requirement.authorization_server_metadata
    assert server.issuer == stack.auth.issuer
    assert server.metadata_url == stack.auth.issuer.replace(
        "/oauth", "/.well-known/oauth-authorization-server/oauth"
    )
    assert server.metadata is not None
    assert server.metadata["token_endpoint"] == stack.auth.issuer + "/token"
    assert server.metadata["authorization_endpoint"] == stack.auth.issuer + "/authorize"
    assert server.metadata["registration_endpoint"] == stack.auth.issuer + "/register"
    for request in stack.metadata_requests():
        assert "x-api-key" not in request.headers
        assert "authorization" not in request.headers
    assert requirement.to_dict()["authorization_servers"] == [stack.auth.issuer]


def test_a_server_that_does_not_answer_401_needs_nothing(make_stack):
    stack = make_stack()
    stack.auth.add_client("lemon", secret="secret")
    # the AS's metadata URL answers 200, i.e. a server that does not challenge
    url = stack.auth.issuer.replace("/oauth", "/.well-known/oauth-authorization-server/oauth")
    assert anyio.run(lambda: probe(url)) is None


def test_auth_required_error_names_the_authorization_servers(make_stack):
    stack = make_stack()
    requirement = anyio.run(lambda: probe(stack.mcp_url))
    assert requirement is not None
    error = McpAuthRequired(server="secured", requirement=requirement.to_dict())
    assert str(error) == f"MCP server 'secured': authorization required by {stack.auth.issuer}"
    assert error.hint and '"oauth"' in error.hint
    assert error.requirement["resource"] == stack.mcp_url
