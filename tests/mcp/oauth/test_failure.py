from __future__ import annotations

from types import SimpleNamespace

import anyio

from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.config.entries import HttpServer, StdioServer
from lemon_skills.mcp.oauth import failure
from lemon_skills.mcp.session.connect import Probe


class _ReportingAuth:
    """Stands in for an httpx2.Auth that reports its state (the Protocol, not our provider)."""

    def __init__(self, error=None, flow="client_credentials"):
        self.last_error = error
        self.settings = SimpleNamespace(flow=flow)

    def describe(self):
        return {"token": "held"}


def _attempt(config, auth=None):
    return SimpleNamespace(config=config, auth=auth, auth_required={"stale": True}, hold=False)


def _explain(attempt, status):
    async def run():
        probe = Probe()
        probe.http_status = status
        return await failure.explain_failure(attempt, probe, otherwise="connection refused")

    return anyio.run(run)


def test_the_providers_precise_reason_wins_and_holds_an_interactive_login():
    error = McpAuthError("token refused", server="s", hint="sign in again")
    auth = _ReportingAuth(error, flow="authorization_code_pkce")
    attempt = _attempt(HttpServer(name="s", url="https://x/mcp", oauth={}), auth)
    reason = _explain(attempt, 401)
    assert "token refused" in reason and reason.endswith("; sign in again")
    assert attempt.hold is True
    assert attempt.auth_required is None


def test_a_non_interactive_flow_is_not_held():
    auth = _ReportingAuth(McpAuthError("bad secret", server="s"))
    attempt = _attempt(HttpServer(name="s", url="https://x/mcp", oauth={}), auth)
    assert "bad secret" in _explain(attempt, 401)
    assert attempt.hold is False


def test_a_refused_authorization_header_says_to_replace_the_token():
    cfg = HttpServer(name="s", url="https://x/mcp", headers={"authorization": "Bearer old"})
    reason = _explain(_attempt(cfg), 401)
    assert "refused the Authorization header" in reason
    assert "replace it" in reason


def test_other_failures_keep_the_transport_reason():
    cfg = HttpServer(name="s", url="https://x/mcp", headers={"Authorization": "Bearer t"})
    assert _explain(_attempt(cfg), 500) == "connection refused"
    assert _explain(_attempt(StdioServer(name="s", command="srv")), None) == "connection refused"


def test_refused_header_only_for_401_without_oauth():
    probe = SimpleNamespace(http_status=401)
    with_header = {"Authorization": "Bearer t"}
    assert failure.refused_header(HttpServer(name="s", url="u", headers=with_header), probe)
    assert failure.refused_header(HttpServer(name="s", url="u"), probe) is None
    oauth = HttpServer(name="s", url="u", headers=with_header, oauth={})
    assert failure.refused_header(oauth, probe) is None


def test_begin_attempt_forgets_the_previous_error_and_status_reports_the_auth():
    auth = _ReportingAuth(McpAuthError("old", server="s"))
    failure.begin_attempt(auth)
    assert failure.auth_error(auth) is None
    assert failure.auth_status(auth) == {"token": "held"}
    assert failure.auth_status(object()) is None
