"""The 24 checks of the Streamable HTTP proof.

1-8 a direct session with the HTTP fixture; 9 the wire of such a session (media types, session
and protocol headers, an SSE response); 10-17 OAuth against the fixture authorization server
and a protected MCP server, through ``McpSource`` configured as a user would configure it
(each check on its own pair of servers, so their request logs are the check's own); 18-23
``McpSource`` against the HTTP fixture; 24 a PKCE login through the loopback listener behind an
operator approval. Tokens are compared inside the checks and never written to the proof.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import anyio
import httpx2

from lemon_skills import secrets
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.mcp.config.parse import parse_server
from lemon_skills.mcp.oauth.flows import AuthorizationRequest
from lemon_skills.mcp.session.connect import connect
from lemon_skills.mcp.session.factories import oauth_factory
from lemon_skills.mcp.source import McpSource
from lemon_skills.selftest.checks import client_checks, fixture_entries, source_checks
from lemon_skills.selftest.fixtures import server as fixture_server
from lemon_skills.selftest.fixtures.oauth_server import Recorded
from lemon_skills.selftest.fixtures.protected import Recorder, Stack, protected_stack
from lemon_skills.selftest.fixtures.serve import Served
from lemon_skills.selftest.proof import Proof, expect, wait_for_approval

#: The server's name, so its tools are ``mcp_mcp_<tool>`` as in the original proof.
SERVER = "mcp"
SECURED_TOOL = f"mcp_{SERVER}_secured_echo"
CC = {"client_id": "lemon", "client_secret": "secret"}
PUBLIC = "lemon-public"
CACHE_SECRET = "mcp-http-smoke-tokens"
_WAIT_S = 30.0


def run_http(proof: Proof) -> None:
    """Append the 24 checks to ``proof``."""
    with fixture_entries("http") as make:
        client_checks(proof, "http", make("http"))
        proof.check("mcp_http_streamable_sse_response_and_session_headers", _wire)
        found: dict[str, Any] = {}
        proof.check("mcp_http_oauth_protected_resource_metadata", lambda: _challenge(found))
        proof.check("mcp_http_oauth_authorization_server_metadata", lambda: _as_metadata(found))
        proof.check("mcp_http_oauth_client_credentials_token_acquisition", _acquire)
        proof.check("mcp_http_oauth_client_credentials_token_refresh", _reacquire)
        proof.check("mcp_http_oauth_refresh_token_grant", _refresh_grant)
        proof.check("mcp_http_oauth_client_secret_basic_token_auth", _basic)
        with _stack(public_redirect="http://127.0.0.1/callback") as stack:
            proof.check("mcp_http_oauth_pkce_authorization_code", lambda: _pkce(stack))
            proof.check("mcp_http_oauth_token_cache_resume", lambda: _resume(stack))
        source_checks(proof, "http", make, server=SERVER)
        proof.check("mcp_source_http_oauth_loopback_callback", _loopback)


@contextmanager
def _stack(
    *, public_redirect: str | None = None, refresh: bool = False, **options: Any
) -> Iterator[Stack]:
    """A protected server whose AS knows the confidential client ``lemon`` (refresh tokens
    only with ``refresh``) and, with ``public_redirect``, the public client."""
    with protected_stack(**options) as stack:
        stack.auth.add_client("lemon", secret="secret", issue_refresh=refresh)
        if public_redirect:
            stack.auth.add_client(PUBLIC, redirect_uris=(public_redirect,))
        yield stack


def _source(stack: Stack, oauth: dict[str, Any] | None, **kw: Any) -> McpSource:
    entry: dict[str, Any] = {"name": SERVER, "url": stack.mcp_url}
    if oauth is not None:
        entry["oauth"] = oauth
    return McpSource([entry], include_config=False, **kw)


def _wire() -> None:
    recorder = Recorder(fixture_server.http_app())
    seen: dict[str, Any] = {}
    with Served(recorder) as served:
        cfg = parse_server({"name": "wire", "url": served.url("/mcp"), "protocol": "legacy"})

        async def session() -> None:
            async with connect(cfg, ready_timeout=15) as conn:
                seen["tools"] = [t.name for t in (await conn.client.list_tools()).tools]
                seen["protocol"] = conn.client.protocol_version

        anyio.run(session)
    posts = [r for r in recorder.requests if r.method == "POST"]
    order = [r.rpc_method() for r in posts[:3]]
    expect(order == ["initialize", "notifications/initialized", "tools/list"], "request order")
    init, notification, listing = posts[:3]
    accept = init.headers.get("accept", "")
    expect("application/json" in accept and "text/event-stream" in accept, "initialize accept")
    session_id = init.response_headers.get("mcp-session-id")
    expect(bool(session_id), "the fixture issued no session id")
    for later in (notification, listing):
        expect(later.headers.get("mcp-session-id") == session_id, "session id not sent back")
        expect(later.headers.get("mcp-protocol-version") == seen["protocol"], "no protocol header")
    expect(notification.status == 202, "the notification was not accepted with 202")
    expect("text/event-stream" in listing.response_headers.get("content-type", ""), "not SSE")
    expect({"echo", "fail"} <= set(seen["tools"]), "the SSE-framed tools/list was not decoded")


def _challenge(found: dict[str, Any]) -> None:
    with _stack() as stack, _source(stack, None) as source:
        tools = source.discover_tools()
        status = source.status()["servers"][SERVER]
        found.update(status.get("auth_required") or {}, expected_issuer=stack.auth.issuer)
    expect(tools == [] and not status["connected"], "connected without authorization")
    expect((status["last_error"] or "").startswith("authorization required"), "no clear error")
    expect(found.get("resource") == stack.mcp_url, "resource is not the MCP URL")
    expect(found.get("authorization_servers") == [stack.auth.issuer], "authorization servers")
    expect("oauth-protected-resource" in (found.get("resource_metadata_url") or ""), "PRM URL")
    expect("Bearer" in (found.get("www_authenticate") or ""), "no Bearer challenge")


def _as_metadata(found: dict[str, Any]) -> None:
    issuer = found.get("expected_issuer", "")
    listed = found.get("authorization_server_metadata") or []
    expect(len(listed) == 1, "not exactly one authorization server")
    info = listed[0]
    expect(info.get("issuer") == issuer, "issuer")
    doc = info.get("metadata") or {}
    for key, path in (
        ("authorization", "authorize"),
        ("token", "token"),
        ("registration", "register"),
    ):
        expect(doc.get(f"{key}_endpoint") == f"{issuer}/{path}", f"{key} endpoint")  # fmt: skip
    origin = issuer.removesuffix("/oauth")
    expect(
        info.get("metadata_url") == f"{origin}/.well-known/oauth-authorization-server/oauth", "URL"
    )


def _acquire() -> None:
    with _stack() as stack:
        with _source(stack, {**CC, "scope": "tools prompts"}) as source:
            expect(SECURED_TOOL in {t.name for t in source.discover_tools()}, "no tools")
        [token] = _tokens(stack, 1)
        expect(
            token.form == {**_grant("client_credentials", stack), **CC, "scope": "tools prompts"},
            "unexpected token request",
        )
        expect(
            all("authorization" not in r.headers for r in stack.metadata_requests()),
            "metadata requests carried credentials",
        )
        [issued] = stack.auth.access_tokens
        listing = [r for r in stack.mcp_requests() if r.rpc_method() == "tools/list"]
        expect(bool(listing), "no tools/list")
        expect(all(_bearer(r) == issued for r in listing), "tools/list without the bearer")


def _reacquire() -> None:
    with _stack() as stack, _source(stack, CC) as source:
        source.discover_tools()
        first = set(stack.auth.access_tokens)
        stack.auth.revoke_access_tokens()
        expect(source.call_tool(SECURED_TOOL, {"message": "ok"}).text == "echo:ok", "no echo")
        grants = [r.form.get("grant_type") for r in _tokens(stack, 2)]
        expect(grants == ["client_credentials", "client_credentials"], "not reacquired once")
        second = set(stack.auth.access_tokens)
        expect(first != second and (first | second) <= set(stack.bearers()), "bearers")


def _refresh_grant() -> None:
    with _stack(scopes=("refresh-lifecycle",), refresh=True) as stack:
        with _source(stack, {**CC, "scope": "refresh-lifecycle"}) as source:
            source.discover_tools()
            first_access, first_refresh = (
                set(stack.auth.access_tokens),
                set(stack.auth.refresh_tokens),
            )
            stack.auth.revoke_access_tokens()
            expect(source.call_tool(SECURED_TOOL, {"message": "r"}).text == "echo:r", "no echo")
        first, second = _tokens(stack, 2)
        expect(first.form.get("grant_type") == "client_credentials", "first grant")
        expect(first.form.get("scope") == "refresh-lifecycle", "first scope")
        expect(second.form.get("grant_type") == "refresh_token", "no refresh-token grant")
        expect(second.form.get("refresh_token") in first_refresh, "another refresh token")
        expect(second.form.get("resource") == stack.mcp_url, "no resource on the refresh")
        bearers = stack.bearers()
        expect(bearers[0] in first_access and bearers[-1] in stack.auth.access_tokens, "bearers")


def _basic() -> None:
    with _stack() as stack:
        oauth = {**CC, "scope": "tools", "token_auth_method": "client_secret_basic"}
        with _source(stack, oauth) as source:
            expect(SECURED_TOOL in {t.name for t in source.discover_tools()}, "no tools")
        [token] = _tokens(stack, 1)
        expect(token.form == {**_grant("client_credentials", stack), "scope": "tools"}, "form")
        basic = "Basic " + base64.b64encode(b"lemon:secret").decode()
        expect(token.headers.get("authorization") == basic, "no Basic client authentication")


def _pkce_oauth(redirect_uri: str) -> dict[str, Any]:
    return {
        "flow": "authorization_code_pkce",
        "client_id": PUBLIC,
        "redirect_uri": redirect_uri,
        "scope": "tools",
        "token_secret": CACHE_SECRET,
    }


def _pkce(stack: Stack) -> None:
    seen: list[AuthorizationRequest] = []
    codes: list[str] = []

    async def browser(request: AuthorizationRequest) -> dict[str, str]:
        seen.append(request)
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as http:
            consent = await http.get(request.authorization_url)
        answer = {k: v[0] for k, v in parse_qs(urlsplit(consent.headers["location"]).query).items()}
        codes.append(answer["code"])
        return {"code": answer["code"], "state": answer["state"]}

    oauth = _pkce_oauth("http://127.0.0.1/callback")
    with _source(stack, oauth, auth_factory=oauth_factory(code_provider=browser)) as source:
        expect(SECURED_TOOL in {t.name for t in source.discover_tools()}, "no tools")
    [request] = seen
    expect(request.authorization_endpoint == stack.auth.issuer + "/authorize", "endpoint")
    expect((request.client_id, request.scope) == (PUBLIC, "tools"), "client or scope")
    expect(request.redirect_uri == oauth["redirect_uri"], "redirect_uri")
    expect(request.resource == stack.mcp_url and request.code_challenge_method == "S256", "S256")
    query = dict(parse_qsl(urlsplit(request.authorization_url).query))
    wanted = {"response_type", "client_id", "redirect_uri", "scope", "resource", "state"}
    expect(wanted | {"code_challenge", "code_challenge_method"} <= set(query), "query")
    expect(query["response_type"] == "code", "response_type")
    [token] = _tokens(stack, 1)
    verifier = token.form.get("code_verifier", "")
    expect(_challenge_of(verifier) == request.code_challenge, "the verifier does not match")
    exchange = {
        "grant_type": "authorization_code",
        "client_id": PUBLIC,
        "code": codes[0],
        "redirect_uri": oauth["redirect_uri"],
        "resource": stack.mcp_url,
    }
    sent = {k: token.form.get(k) for k in exchange}
    expect(sent == exchange, "unexpected code exchange")
    expect(stack.bearers()[-1] in stack.auth.access_tokens, "the new bearer was not used")


def _resume(stack: Stack) -> None:
    record = json.loads(secrets.get(CACHE_SECRET) or "{}")
    for key in ("access_token", "refresh_token", "expires_at", "token_endpoint"):
        expect(bool(record.get(key)), f"the cache has no {key}")
    expect(record.get("client_id") == PUBLIC and record.get("resource") == stack.mcp_url, "ids")
    expect(bool(record.get("authorization_server_metadata")), "the cache has no metadata")
    before = (len(stack.auth.requests), len(stack.metadata_requests()), len(stack.mcp_requests()))

    async def nobody(request: AuthorizationRequest) -> str:
        raise AssertionError("the resumed source asked for a new authorization")

    oauth = _pkce_oauth("http://127.0.0.1/callback")
    with _source(stack, oauth, auth_factory=oauth_factory(code_provider=nobody)) as source:
        expect(SECURED_TOOL in {t.name for t in source.discover_tools()}, "no tools")
    expect(len(stack.auth.requests) == before[0], "token or authorization-server requests")
    expect(len(stack.metadata_requests()) == before[1], "metadata requests")
    resumed = stack.mcp_requests()[before[2] :]
    expect(bool(resumed), "no MCP requests")
    expect(all(_bearer(r) == record["access_token"] for r in resumed), "not the cached bearer")


def _loopback() -> None:
    oauth = {**_pkce_oauth("http://127.0.0.1:0/callback"), "authorization_timeout_ms": 30000}
    del oauth["token_secret"]
    observed: list[AuthorizationRequest] = []
    found: list[str] = []
    store = ApprovalStore()
    with _stack(public_redirect="http://127.0.0.1:1/callback") as stack:
        factory = oauth_factory(approvals=store, on_authorization=observed.append)
        with _source(stack, oauth, auth_factory=factory) as source:
            worker = threading.Thread(
                target=lambda: found.extend(t.name for t in source.discover_tools()), daemon=True
            )
            worker.start()
            pending = wait_for_approval(
                store, lambda a: a.tool == f"mcp_{SERVER}_oauth", timeout=_WAIT_S
            )
            code = _sign_in(str(pending.action.get("authorization_url")))
            store.approve(pending.id, by="smoke")
            worker.join(_WAIT_S)
        [request] = observed
        expect((request.client_id, request.scope) == (PUBLIC, "tools"), "client or scope")
        expect(request.resource == stack.mcp_url, "resource")
        expect(urlsplit(request.redirect_uri or "").port not in (None, 0), "no listener port")
        action = dict(pending.action)
        expect(action.get("type") == "mcp_oauth_authorization", "approval type")
        expect(action.get("authorization_url") == request.authorization_url, "approval URL")
        expect(action.get("resource") == stack.mcp_url, "approval resource")
        [token] = _tokens(stack, 1)
        expect(token.form.get("grant_type") == "authorization_code", "grant")
        expect(token.form.get("code") == code and bool(token.form.get("code_verifier")), "code")
        expect(token.form.get("redirect_uri") == request.redirect_uri, "redirect_uri")
        expect(token.form.get("resource") == stack.mcp_url, "resource")
        expect(SECURED_TOOL in found, "the secured tools were not discovered")


def _sign_in(authorization_url: str) -> str:
    """Be the operator's browser: the AS consents and redirects to the loopback callback."""
    with httpx2.Client(follow_redirects=False, timeout=10) as browser:
        consent = browser.get(authorization_url)
        location = consent.headers["location"]
        expect(browser.get(location).status_code == 200, "the callback was not accepted")
    return parse_qs(urlsplit(location).query)["code"][0]


def _tokens(stack: Stack, count: int) -> list[Recorded]:
    tokens = stack.auth.token_requests()
    expect(len(tokens) == count, f"{len(tokens)} token requests instead of {count}")
    return tokens


def _grant(grant: str, stack: Stack) -> dict[str, str]:
    return {"grant_type": grant, "resource": stack.mcp_url}


def _bearer(request: Recorded) -> str | None:
    value = request.headers.get("authorization", "")
    return value[len("Bearer ") :] if value.startswith("Bearer ") else None


def _challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")
