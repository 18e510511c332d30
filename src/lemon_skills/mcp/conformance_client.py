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

import importlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp.types as types
from mcp.client.auth.utils import extract_resource_metadata_from_www_auth
from mcp.client.session import ClientRequestContext

from lemon_skills.errors import McpConnectError, McpError
from lemon_skills.mcp.oauth.provider import AuthorizationRequest
from lemon_skills.mcp.session.factories import oauth_factory
from lemon_skills.mcp.session.lifecycle import AuthFactory
from lemon_skills.mcp.source import McpSource

logger = logging.getLogger("lemon_skills.conformance")

#: A Client ID Metadata Document URL (the suite's mock AS accepts it without fetching it).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"
#: The entry's name: tools are ``mcp_conformance_<tool>``.
SERVER = "conformance"
#: How long the sse-retry scenario lets the SDK's standalone GET stream open before calling.
STANDALONE_STREAM_SETTLE_S = 0.5
#: SEP-2640 host scenarios, and the module that plays the host for them.
SKILLS_SCENARIOS = "sep-2640-client-"
SKILLS_HOST = "lemon_skills.tools.skills_conformance"
_SDK_ONLY = ("auth/client-credentials-jwt",)
#: SEP-990 under its 0.2 name and its 0.1 name.
_ENTERPRISE = ("auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow")
#: Scenarios that observe a call of every tool lemon offers (and none it left out).
_EVERY_TOOL = ("sep-2322-client-request-state", "http-invalid-tool-headers")
SCHEMA_TOOL = "json_schema_2020_12_tool"
ECHO_TOOL = "json_schema_echo"
_SAMPLES: dict[str, Any] = {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
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


def oauth_config(scenario: str, context: Mapping[str, Any], workdir: Path) -> dict[str, Any] | None:
    """The ``oauth`` object a user would write for the scenario's server (None: no auth).
    JWTs the scenario hands over are written to files in ``workdir``, where a workload or a
    user's session would keep them."""
    if not scenario.startswith("auth/") or scenario in _SDK_ONLY:
        return None
    if scenario == "auth/wif-jwt-bearer":
        return {
            "flow": "jwt_bearer",
            "client_id": context["client_id"],
            "assertion": {"file": _keep(workdir / "workload.jwt", context["valid_jwt"])},
        }
    if scenario in _ENTERPRISE:
        return {
            "flow": "enterprise",
            "client_id": context["client_id"],
            "client_secret": context["client_secret"],
            "token_auth_method": "client_secret_basic",
            "idp": {
                "token_endpoint": context["idp_token_endpoint"],
                "client_id": context["idp_client_id"],
                "id_token": {"file": _keep(workdir / "id.jwt", context["idp_id_token"])},
            },
        }
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
    if scenario.startswith("auth/dpop"):
        config["dpop"] = True
    return config


def _keep(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return str(path)


def auth_factory(scenario: str, url: str, context: Mapping[str, Any]) -> AuthFactory:
    """How the source authenticates: lemon's own OAuth from the entry's ``oauth`` config, with
    the suite's mock authorization server played headlessly instead of an operator; the SDK's
    provider only for private_key_jwt client authentication, which lemon's oauth config has no
    keys for."""
    if scenario == "auth/client-credentials-jwt":
        # private_key_jwt client authentication (RFC 7523): no key material in lemon's config.
        issuer = anyio.run(discover_issuer, url)
        return lambda cfg: _private_key_jwt(url, context, issuer)
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
    with tempfile.TemporaryDirectory(prefix="lemon-conformance-") as workdir:
        oauth = oauth_config(scenario, context, Path(workdir))
        if oauth is not None:
            entry["oauth"] = oauth
        _run_entry(scenario, url, context, entry)


def _run_entry(
    scenario: str, url: str, context: Mapping[str, Any], entry: Mapping[str, Any]
) -> None:
    with McpSource(
        [entry],
        include_config=False,
        auth_factory=auth_factory(scenario, url, context),
        elicitation_factory=lambda cfg: apply_defaults,
    ) as source:
        host_tools = source.discover_tools()
        report = source.status()
        status = report["servers"].get(SERVER)
        if status is None:
            problems = "; ".join(i["reason"] for i in report["config_errors"])
            raise McpConnectError(f"invalid entry: {problems}", server=SERVER)
        if not status["connected"]:
            raise McpConnectError(status["last_error"] or "not connected", server=SERVER)
        specs = [s for s in source.tool_specs() if s.kind == "tool"]
        tools = {s.target: s.name for s in specs}
        logger.info("listed %d tools", len(tools))
        # What the host was handed for each tool (the Anthropic export's input_schema).
        schemas = {t.name: t.to_anthropic()["input_schema"] for t in host_tools}
        host_schema = {s.target: schemas.get(s.name, s.input_schema) for s in specs}
        if scenario == "sse-retry":
            # The SDK opens its standalone GET stream in the background after initializing;
            # the mock counts the first GET after the call's priming event as the client's
            # reconnection, so a GET still opening when the call starts reads as reconnecting
            # early. Give that stream time to open first.
            time.sleep(STANDALONE_STREAM_SETTLE_S)
        for target, arguments in planned_calls(scenario, context, host_schema):
            result = source.call_tool(tools[target], arguments)
            logger.info("%s -> is_error=%s", target, result.is_error)


def planned_calls(
    scenario: str, context: Mapping[str, Any], schemas: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls (original name, arguments) that ``scenario`` observes, among the tools
    lemon lists (``schemas``: each tool's input schema as the host sees it)."""
    if scenario in _TOOL_FOR:
        target, arguments = _TOOL_FOR[scenario]
        return [(target, dict(arguments))]
    if context.get("toolCalls"):
        return [(c["name"], dict(c.get("arguments") or {})) for c in context["toolCalls"]]
    if scenario == "json-schema-2020-12-preservation":
        return [(ECHO_TOOL, {"schema": dict(schemas[SCHEMA_TOOL])})]
    if scenario in _EVERY_TOOL:
        return [(name, sample_arguments(schema)) for name, schema in schemas.items()]
    if scenario.startswith("auth/") and schemas:
        # Auth scenarios check that a protected call (and any scope step-up) works.
        return [(next(iter(schemas)), {})]
    return []


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments satisfying the required properties of a simple object schema."""
    props = schema.get("properties") or {}
    return {
        name: _SAMPLES.get(str((props.get(name) or {}).get("type")), "sample")
        for name in schema.get("required") or ()
    }


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
        if scenario.startswith(SKILLS_SCENARIOS):
            # The skills scenarios test the host side of SEP-2640, which is the skills layer
            # consuming this client: the whole library is the client under test there.
            host: Any = importlib.import_module(SKILLS_HOST)
            host.run(scenario, args[-1])
        else:
            run(scenario, args[-1], context)
    except McpError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
