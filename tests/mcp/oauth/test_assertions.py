"""The jwt-bearer grant (RFC 7523) with a workload's JWT from a file or a command, and the
enterprise flow (SEP-990): the user's ID token exchanged at the IdP (RFC 8693) for an ID-JAG,
presented to the MCP server's authorization server as the jwt-bearer assertion."""

from __future__ import annotations

import base64
import sys
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.oauth.options import validate_oauth
from lemon_skills.mcp.oauth.provider import build_auth
from tests.mcp.oauth_support import failure, run_echo

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def test_a_workload_jwt_from_a_file_is_the_assertion_and_is_read_again(make_stack, tmp_path):
    stack = make_stack()
    stack.auth.add_client("workload")
    stack.auth.assertions |= {"jwt-1", "jwt-2"}
    jwt = tmp_path / "token.jwt"
    jwt.write_text("jwt-1\n")
    config = {"flow": "jwt_bearer", "client_id": "workload", "assertion": {"file": str(jwt)}}

    def rotate(i: int) -> None:
        if i == 1:
            jwt.write_text("jwt-2")  # the platform rotated the workload token
            stack.auth.revoke_access_tokens()

    auth = build_auth("wif", stack.mcp_url, config)
    assert run_echo(stack.mcp_url, auth, count=2, between=rotate) == ["echo:m0", "echo:m1"]
    first, second = stack.auth.token_requests()
    assert first.form == {
        "grant_type": JWT_BEARER,
        "assertion": "jwt-1",
        "client_id": "workload",
        "resource": stack.mcp_url,
        "scope": "tools",
    }
    assert second.form["assertion"] == "jwt-2"
    assert len(set(stack.bearers())) == 2


def test_a_workload_jwt_can_come_from_a_command(make_stack):
    stack = make_stack()
    stack.auth.add_client("workload")
    stack.auth.assertions.add("from-command")
    command = [sys.executable, "-c", "print('from-command')"]
    config = {"flow": "jwt_bearer", "client_id": "workload", "assertion": {"command": command}}
    assert run_echo(stack.mcp_url, build_auth("wif", stack.mcp_url, config)) == ["echo:m0"]
    [token] = stack.auth.token_requests()
    assert token.form["assertion"] == "from-command"


def test_an_empty_assertion_is_an_error_before_any_token_request(make_stack, tmp_path):
    stack = make_stack()
    (tmp_path / "token.jwt").write_text("\n")
    config = {
        "flow": "jwt_bearer",
        "client_id": "workload",
        "assertion": {"file": str(tmp_path / "token.jwt")},
    }
    error = failure(stack.mcp_url, build_auth("wif", stack.mcp_url, config))
    assert isinstance(error, McpAuthError)
    assert "assertion is empty" in str(error)
    assert stack.auth.token_requests() == []


class IdP:
    """An enterprise IdP's token endpoint: one ID token in, one ID-JAG out."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/token", self._token, methods=["POST"])])

    async def _token(self, request: Request) -> Response:
        form = dict(await request.form())
        self.exchanges.append({"form": form, "authorization": request.headers.get("authorization")})
        if form.get("subject_token") != "user-id-token":
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        return JSONResponse(
            {
                "access_token": "id-jag-for-" + str(form.get("audience")),
                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "token_type": "N_A",
            }
        )


def test_enterprise_flow_exchanges_the_id_token_for_an_id_jag(make_stack, serve, tmp_path):
    stack = make_stack()
    stack.auth.add_client("mcp-client", secret="mcp-secret")
    stack.auth.assertions.add("id-jag-for-" + stack.auth.issuer)
    idp = IdP()
    idp_url = serve(idp.app()).url("/token")
    (tmp_path / "id.jwt").write_text("user-id-token")
    config = {
        "flow": "enterprise",
        "client_id": "mcp-client",
        "client_secret": "mcp-secret",
        "token_auth_method": "client_secret_basic",
        "idp": {
            "token_endpoint": idp_url,
            "client_id": "idp-client",
            "id_token": {"file": str(tmp_path / "id.jwt")},
        },
    }
    assert run_echo(stack.mcp_url, build_auth("ema", stack.mcp_url, config)) == ["echo:m0"]
    [exchange] = idp.exchanges
    assert exchange["form"] == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": "user-id-token",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "audience": stack.auth.issuer,
        "resource": stack.mcp_url,
        "scope": "tools",
        "client_id": "idp-client",
    }
    [token] = stack.auth.token_requests()
    assert token.form == {
        "grant_type": JWT_BEARER,
        "assertion": "id-jag-for-" + stack.auth.issuer,
        "resource": stack.mcp_url,
        "scope": "tools",
    }
    basic = base64.b64encode(b"mcp-client:mcp-secret").decode()
    assert token.headers["authorization"] == "Basic " + basic


def test_an_idp_refusal_is_reported_without_the_token(make_stack, serve, tmp_path):
    stack = make_stack()
    stack.auth.add_client("mcp-client", secret="mcp-secret")
    idp_url = serve(IdP().app()).url("/token")
    (tmp_path / "id.jwt").write_text("stale-id-token")
    config = {
        "flow": "enterprise",
        "client_id": "mcp-client",
        "client_secret": "mcp-secret",
        "idp": {"token_endpoint": idp_url, "id_token": {"file": str(tmp_path / "id.jwt")}},
    }
    error = failure(stack.mcp_url, build_auth("ema", stack.mcp_url, config))
    assert isinstance(error, McpAuthError)
    assert "refused the token exchange (HTTP 400, invalid_grant)" in str(error)
    assert "stale-id-token" not in str(error)
    assert stack.auth.token_requests() == []


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"flow": "jwt_bearer", "client_id": "c"}, "oauth.assertion must be an object"),
        (
            {"flow": "jwt_bearer", "client_id": "c", "assertion": {"file": "a", "secret": "b"}},
            "oauth.assertion needs exactly one of file, command, secret",
        ),
        ({"assertion": {"file": "a"}}, "oauth flow jwt_bearer needs client_id"),
        (
            {"flow": "enterprise", "client_id": "c", "idp": {"id_token": {"file": "t"}}},
            "oauth.idp.token_endpoint must be an http(s) URL",
        ),
    ],
)
def test_assertion_configs_are_validated(config, problem):
    assert any(p.startswith(problem) for p in validate_oauth(config))
