"""The pure parts of the OAuth flows: what an operator is shown, which authorization URLs may
be opened, what a host's code provider may answer, and why a token response is unusable."""

from __future__ import annotations

import httpx2
import pytest
from mcp.shared.auth import AuthorizationCodeResult

from lemon_skills.approvals.records import ApprovalContext
from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.oauth.flows import (
    AuthorizationRequest,
    approval_request,
    check_authorization_url,
    code_result,
    token_problem,
)

URL = (
    "https://as.example/authorize?response_type=code&client_id=cli&redirect_uri="
    "http%3A%2F%2F127.0.0.1%3A8765%2Fcb&scope=tools&resource=https%3A%2F%2Fmcp.example%2Fmcp"
    "&state=s3cret-state&code_challenge=abc&code_challenge_method=S256"
)


def test_the_request_is_read_back_from_the_url_and_the_approval_names_the_state_by_hash():
    request = AuthorizationRequest.from_url(URL)
    assert request.authorization_endpoint == "https://as.example/authorize"
    assert (request.client_id, request.scope, request.code_challenge_method) == (
        "cli",
        "tools",
        "S256",
    )
    assert request.redirect_uri == "http://127.0.0.1:8765/cb"
    tool, action, rationale, context = approval_request(
        "Git Hub", request, ApprovalContext(agent_id="a1")
    )
    assert tool == "mcp_git_hub_oauth"
    assert action["authorization_url"] == URL and action["state_hash"] == request.state_hash
    assert len(request.state_hash) == 16 and "state" not in action
    assert "resource=https://mcp.example/mcp" in rationale and "client=cli" in rationale
    assert (context.run_id, context.session_key, context.agent_id) == (
        "mcp-oauth-git_hub",
        "agent:mcp:oauth",
        "a1",
    )


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("javascript:alert(1)", "scheme 'javascript'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("http://as.example/authorize", "https is required off loopback"),
        ("https:///authorize", r"scheme .https.: only http\(s\)"),
    ],
)
def test_only_https_or_loopback_http_authorization_urls_are_opened(url, refusal):
    with pytest.raises(McpAuthError, match=refusal):
        check_authorization_url(url, server="s")


def test_https_and_loopback_http_are_fine():
    for url in ("https://as.example/a", "http://127.0.0.1:9/a", "http://localhost/a"):
        check_authorization_url(url)


def test_a_code_providers_answer_is_normalised_and_an_empty_one_refused():
    assert code_result("c0de", "st") == AuthorizationCodeResult(code="c0de", state="st")
    mapped = code_result({"code": "c", "state": "x", "iss": "https://as"}, "st")
    assert (mapped.code, mapped.state, mapped.iss) == ("c", "x", "https://as")
    given = AuthorizationCodeResult(code="c", state="st")
    assert code_result(given, "other") is given
    for empty in (None, "", {"state": "st"}):
        with pytest.raises(McpAuthError, match="returned no code"):
            code_result(empty, "st")


def response(status: int, body: object) -> httpx2.Response:
    return httpx2.Response(status, json=body)


def test_token_problems_are_described_without_echoing_the_response():
    def scrub(text: str) -> str:
        return text.replace("hunter2", "***")

    assert token_problem(response(200, {"access_token": "t"}), scrub) is None
    refused = {"error": "invalid_client", "error_description": "secret hunter2 is wrong"}
    assert token_problem(response(401, refused), scrub) == (
        "token endpoint refused: invalid_client (secret *** is wrong)"
    )
    assert token_problem(httpx2.Response(502, text="<html>"), scrub) == (
        "token endpoint answered HTTP 502"
    )
    assert token_problem(response(200, ["t"]), scrub) == (
        "token endpoint answered something other than a JSON object"
    )
    assert token_problem(response(200, {"access_token": ""}), scrub) == (
        "token response has no access_token"
    )
    mac = {"access_token": "t", "token_type": "mac"}
    assert token_problem(response(200, mac), scrub) == "token response is not a bearer token"
    dpop = {"access_token": "t", "token_type": "DPoP"}
    assert token_problem(response(200, dpop), scrub) == "token response is not a bearer token"
    assert token_problem(response(200, dpop), scrub, dpop=True) is None
