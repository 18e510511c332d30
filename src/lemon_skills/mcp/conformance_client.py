"""The client under test for the official MCP conformance suite.

``python -m lemon_skills.mcp.conformance_client SERVER_URL`` is what
``@modelcontextprotocol/conformance client --command ...`` runs: the suite appends the URL of
its mock server, names the scenario in ``MCP_CONFORMANCE_SCENARIO`` and passes credentials in
``MCP_CONFORMANCE_CONTEXT`` (JSON). The process must connect, do what the scenario expects and
exit 0. The connection is an ``McpSource`` with the mock server as an ``http`` entry, so the
suite exercises what agents use: config parsing, the manager, lemon's OAuth provider built from
the entry's ``oauth`` object (with the suite's mock authorization page played headlessly in
place of an operator) and the source's tool calls. The two enterprise extensions lemon-skills
has no config for (private_key_jwt, SEP-990 identity assertion) plug the SDK's providers in
through ``auth_factory``. ``scripts/conformance.sh`` runs every client scenario.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp.types as types
from mcp.client.auth.utils import extract_resource_metadata_from_www_auth
from mcp.client.session import ClientRequestContext

from lemon_skills.errors import McpConnectError, McpError
from lemon_skills.mcp.factories import oauth_factory
from lemon_skills.mcp.manager import AuthFactory
from lemon_skills.mcp.oauth.provider import AuthorizationRequest
from lemon_skills.mcp.source import McpSource

logger = logging.getLogger("lemon_skills.conformance")

#: A Client ID Metadata Document URL (the suite's mock AS accepts it without fetching it).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"
#: The entry's name: tools are ``mcp_conformance_<tool>``.
SERVER = "conformance"
#: How long the sse-retry scenario lets the SDK's standalone GET stream open before calling.
STANDALONE_STREAM_SETTLE_S = 0.5
_SDK_ONLY = ("auth/client-credentials-jwt", "auth/cross-app-access-complete-flow")
_TOOL_FOR = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "sse-retry": ("test_reconnection", {}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
}


async def headless_login(request: AuthorizationRequest) -> dict[str, str]:
    """Be the browser: GET the authorization URL and read code and state from the redirect."""
    async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as browser:
        consent = await browser.get(request.authorization_url)
    location = consent.headers.get("location")
    if consent.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"authorization endpoint answered {consent.status_code}")
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    return {k: query[k] for k in ("code", "state", "iss") if k in query}


async def apply_defaults(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """Accept an elicitation with the schema's defaults (SEP-1034)."""
    content: dict[str, Any] = {}
    if isinstance(params, types.ElicitRequestFormParams):
        for name, schema in params.requested_schema.get("properties", {}).items():
            if isinstance(schema, Mapping) and "default" in schema:
                content[name] = schema["default"]
    return types.ElicitResult(action="accept", content=content)


async def discover_issuer(url: str) -> str:
    """The authorization server the resource names (for providers that need it up front)."""
    async with httpx2.AsyncClient(timeout=10) as http:
        challenge = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
            headers={"accept": "application/json, text/event-stream"},
        )
        metadata_url = extract_resource_metadata_from_www_auth(challenge)
        if not metadata_url:
            parts = urlsplit(url)
            metadata_url = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource"
        prm = (await http.get(metadata_url)).json()
    return str(prm["authorization_servers"][0])


def oauth_config(scenario: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``oauth`` object a user would write for the scenario's server (None: no auth)."""
    if not scenario.startswith("auth/") or scenario in _SDK_ONLY:
        return None
    if scenario == "auth/client-credentials-basic":
        return {
            "flow": "client_credentials",
            "client_id": context["client_id"],
            "client_secret": context["client_secret"],
            "token_auth_method": "client_secret_basic",
        }
    config: dict[str, Any] = {
        "flow": "authorization_code_pkce",
        "redirect_uri": REDIRECT_URI,
        "client_metadata_url": CIMD_URL,
    }
    if context.get("client_id"):
        config["client_id"] = context["client_id"]
    if context.get("client_secret"):
        config.update(client_secret=context["client_secret"], token_auth_method="basic")
    return config


def auth_factory(scenario: str, url: str, context: Mapping[str, Any]) -> AuthFactory:
    """How the source authenticates: lemon's own OAuth from the entry's ``oauth`` config, with
    the suite's mock authorization server played headlessly instead of an operator; the SDK's
    providers only for the two grants lemon's oauth config has no keys for."""
    if scenario == "auth/client-credentials-jwt":
        # private_key_jwt client authentication (RFC 7523): no key material in lemon's config.
        issuer = anyio.run(discover_issuer, url)
        return lambda cfg: _private_key_jwt(url, context, issuer)
    if scenario == "auth/cross-app-access-complete-flow":
        # SEP-990 identity assertion (an enterprise IdP's ID-JAG): not a lemon oauth flow.
        issuer = anyio.run(discover_issuer, url)
        return lambda cfg: _identity_assertion(url, context, issuer)
    return oauth_factory(code_provider=headless_login)


def _private_key_jwt(url: str, context: Mapping[str, Any], issuer: str) -> httpx2.Auth:
    from mcp.client.auth.extensions.client_credentials import (
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    signer = SignedJWTParameters(
        issuer=context["client_id"],
        subject=context["client_id"],
        signing_key=context["private_key_pem"],
        signing_algorithm=context.get("signing_algorithm", "ES256"),
    )
    return PrivateKeyJWTOAuthProvider(
        server_url=url,
        storage=_SdkStorage(),
        client_id=context["client_id"],
        assertion_provider=signer.create_assertion_provider(),
        issuer=issuer,
    )


def _identity_assertion(url: str, context: Mapping[str, Any], issuer: str) -> httpx2.Auth:
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    async def id_jag(audience: str, resource: str) -> str:
        # RFC 8693 at the enterprise IdP: the user's ID token in exchange for an ID-JAG.
        async with httpx2.AsyncClient(timeout=10) as http:
            answer = await http.post(
                context["idp_token_endpoint"],
                data={
                    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "subject_token": context["idp_id_token"],
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "audience": audience,
                    "resource": resource,
                    **(
                        {"client_id": context["idp_client_id"]}
                        if "idp_client_id" in context
                        else {}
                    ),
                },
            )
        answer.raise_for_status()
        return str(answer.json()["access_token"])

    return IdentityAssertionOAuthProvider(
        server_url=url,
        storage=_SdkStorage(),
        client_id=context["client_id"],
        client_secret=context["client_secret"],
        issuer=issuer,
        assertion_provider=id_jag,
        token_endpoint_auth_method="client_secret_basic",
    )


class _SdkStorage:
    """In-memory TokenStorage for the SDK providers used directly."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def run(scenario: str, url: str, context: Mapping[str, Any]) -> None:
    """Connect to ``url`` through ``McpSource`` and do what ``scenario`` checks.

    Raises:
        McpError: the server could not be reached or initialised, or a tool call failed.
    """
    mode = os.environ.get("LEMON_CONFORMANCE_MODE", "auto")
    entry: dict[str, Any] = {"name": SERVER, "url": url, "protocol": mode}
    oauth = oauth_config(scenario, context)
    if oauth is not None:
        entry["oauth"] = oauth
    with McpSource(
        [entry],
        include_config=False,
        auth_factory=auth_factory(scenario, url, context),
        elicitation_factory=lambda cfg: apply_defaults,
    ) as source:
        source.discover_tools()
        report = source.status()
        status = report["servers"].get(SERVER)
        if status is None:
            problems = "; ".join(i["reason"] for i in report["config_errors"])
            raise McpConnectError(f"invalid entry: {problems}", server=SERVER)
        if not status["connected"]:
            raise McpConnectError(status["last_error"] or "not connected", server=SERVER)
        tools = {s.target: s.name for s in source.tool_specs() if s.kind == "tool"}
        logger.info("listed %d tools", len(tools))
        if scenario in _TOOL_FOR:
            target, arguments = _TOOL_FOR[scenario]
        elif scenario.startswith("auth/") and tools:
            # Auth scenarios check that a protected call (and any scope step-up) works.
            target, arguments = next(iter(tools)), {}
        else:
            return
        if scenario == "sse-retry":
            # The SDK opens its standalone GET stream in the background after initializing;
            # the mock counts the first GET after the call's priming event as the client's
            # reconnection, so a GET still opening when the call starts reads as reconnecting
            # early. Give that stream time to open first.
            time.sleep(STANDALONE_STREAM_SETTLE_S)
        result = source.call_tool(tools[target], arguments)
        logger.info("%s -> is_error=%s", target, result.is_error)


_USAGE = """usage: python -m lemon_skills.mcp.conformance_client SERVER_URL

The client the MCP conformance suite runs against its mock server at SERVER_URL.
Environment: MCP_CONFORMANCE_SCENARIO (default initialize), MCP_CONFORMANCE_CONTEXT (JSON).
scripts/conformance.sh runs every client scenario."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[-1].startswith("-"):
        wanted = bool(args) and args[-1] in ("-h", "--help")
        print(_USAGE, file=sys.stdout if wanted else sys.stderr)
        return 0 if wanted else 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        run(scenario, args[-1], context)
    except McpError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
