"""The client under test for the official MCP conformance suite.

``python -m lemon_skills.mcp.conformance_client SERVER_URL`` is what
``@modelcontextprotocol/conformance client --command ...`` runs: the suite appends the URL of
its mock server, names the scenario in ``MCP_CONFORMANCE_SCENARIO`` and passes credentials in
``MCP_CONFORMANCE_CONTEXT`` (JSON). The process must connect, do what the scenario expects and
exit 0. OAuth goes through :func:`lemon_skills.mcp.oauth.build_auth`; the two enterprise
extensions lemon-skills does not configure (private_key_jwt, SEP-990 identity assertion) use
the SDK's providers directly. ``scripts/conformance.sh`` runs every client scenario.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.auth.utils import extract_resource_metadata_from_www_auth
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from .oauth import AuthorizationRequest, build_auth
from .oauth_cache import MemoryTokenCache

logger = logging.getLogger("lemon_skills.conformance")

#: A Client ID Metadata Document URL (the suite's mock AS accepts it without fetching it).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"
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


async def auth_for(scenario: str, url: str, context: Mapping[str, Any]) -> httpx2.Auth | None:
    """The ``httpx2.Auth`` a scenario needs (None for the unauthenticated ones)."""
    if not scenario.startswith("auth/"):
        return None
    if scenario == "auth/client-credentials-basic":
        config = {
            "flow": "client_credentials",
            "client_id": context["client_id"],
            "client_secret": context["client_secret"],
            "token_auth_method": "client_secret_basic",
        }
        return build_auth("conformance", url, config, token_cache=MemoryTokenCache())
    if scenario == "auth/client-credentials-jwt":
        return await _private_key_jwt(url, context)
    if scenario == "auth/cross-app-access-complete-flow":
        return await _identity_assertion(url, context)
    config = {
        "flow": "authorization_code_pkce",
        "redirect_uri": REDIRECT_URI,
        "authorization_approval": False,
        "client_metadata_url": CIMD_URL,
    }
    if context.get("client_id"):
        config["client_id"] = context["client_id"]
    if context.get("client_secret"):
        config.update(client_secret=context["client_secret"], token_auth_method="basic")
    return build_auth("conformance", url, config, code_provider=headless_login)


async def _private_key_jwt(url: str, context: Mapping[str, Any]) -> httpx2.Auth:
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
        issuer=await discover_issuer(url),
    )


async def _identity_assertion(url: str, context: Mapping[str, Any]) -> httpx2.Auth:
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
        issuer=await discover_issuer(url),
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


async def run(scenario: str, url: str, context: Mapping[str, Any]) -> None:
    """Connect to ``url`` and do what ``scenario`` checks."""
    auth = await auth_for(scenario, url, context)
    mode: Any = os.environ.get("LEMON_CONFORMANCE_MODE", "auto")
    # TODO(McpSource): connect through McpSource with this server as an "http" entry (auth
    # injected), so the suite exercises the same code path agents use.
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=300)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, elicitation_callback=apply_defaults, mode=mode) as client:
            tools = await client.list_tools()
            logger.info("listed %d tools", len(tools.tools))
            if scenario in _TOOL_FOR:
                name, arguments = _TOOL_FOR[scenario]
                result = await client.call_tool(name, arguments)
                logger.info("%s -> is_error=%s", name, result.is_error)
            elif scenario.startswith("auth/") and tools.tools:
                # Auth scenarios check that a protected call (and any scope step-up) works.
                result = await client.call_tool(tools.tools[0].name, {})
                logger.info("%s -> is_error=%s", tools.tools[0].name, result.is_error)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m lemon_skills.mcp.conformance_client SERVER_URL", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    anyio.run(run, scenario, args[-1], context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
