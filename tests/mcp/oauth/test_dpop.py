"""DPoP (RFC 9449): a fixture authorization server that binds tokens to the proof's key and a
resource server that checks every proof, each optionally demanding a server nonce. Proofs are
verified here with code independent of the client's proof builder."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lemon_skills import secrets
from lemon_skills.mcp.oauth.provider import build_auth
from lemon_skills.selftest.fixtures.oauth_server import AuthServer
from lemon_skills.selftest.fixtures.protected import Recorder, Stack, mcp_server
from lemon_skills.selftest.fixtures.serve import Served
from tests.mcp.oauth_support import run_echo

AS_NONCE, RS_NONCE = "as-nonce-1", "rs-nonce-1"
CC = {"client_id": "lemon", "client_secret": "secret", "scope": "tools"}


def _b64(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def _thumbprint(jwk: dict[str, str]) -> str:
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    canonical = json.dumps(members, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).decode().rstrip("=")


def verify(proof: str, method: str, url: str, token: str | None = None) -> dict[str, Any]:
    """The proof's claims and key thumbprint; AssertionError when it is not a valid proof."""
    head, body, sig = proof.split(".")
    header, claims = json.loads(_b64(head)), json.loads(_b64(body))
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    jwk = header["jwk"]
    assert "d" not in jwk
    x, y = (int.from_bytes(_b64(jwk[k]), "big") for k in ("x", "y"))
    key = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    raw = _b64(sig)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        key.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise AssertionError("signature does not verify") from None
    assert claims["htm"] == method and claims["htu"] == url.split("?")[0]
    assert abs(claims["iat"] - time.time()) < 60 and claims["jti"]
    if token is not None:
        ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=")
        assert claims["ath"] == ath.decode()
    else:
        assert "ath" not in claims
    return {**claims, "jkt": _thumbprint(jwk)}


@dataclass
class DpopAuthServer(AuthServer):
    """The fixture AS, binding tokens to the key of a valid proof (token_type DPoP)."""

    require_nonce: bool = False
    bound: dict[str, str] = field(default_factory=dict)  # access token -> jkt
    proofs: list[dict[str, Any]] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "dpop_signing_alg_values_supported": ["ES256"]}

    async def _token(self, request: Request) -> Response:
        proof = request.headers.get("dpop")
        if proof is None:
            return await super()._token(request)
        claims = verify(proof, "POST", str(request.url))
        self.proofs.append(claims)
        if self.require_nonce and claims.get("nonce") != AS_NONCE:
            body = {"error": "use_dpop_nonce"}
            return JSONResponse(body, status_code=400, headers={"DPoP-Nonce": AS_NONCE})
        answer = await super()._token(request)
        token = json.loads(bytes(answer.body))
        if "access_token" in token:
            token["token_type"] = "DPoP"
            self.bound[token["access_token"]] = claims["jkt"]
        return JSONResponse(token, status_code=answer.status_code)


@dataclass
class DpopResource:
    """ASGI middleware in front of the protected MCP server: a ``DPoP`` token must come with a
    valid proof for its key (and the nonce, when required); it then reaches the SDK's bearer
    check as a bearer."""

    app: Any
    auth: DpopAuthServer
    url: str
    require_nonce: bool = False
    proofs: list[dict[str, Any]] = field(default_factory=list)
    challenged: int = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scope["type"] == "http" and scheme == "DPoP":
            claims = verify(headers["dpop"], scope["method"], self.url, token)
            assert self.auth.bound[token] == claims["jkt"]  # the key the token is bound to
            self.proofs.append(claims)
            if self.require_nonce and claims.get("nonce") != RS_NONCE:
                self.challenged += 1
                reply = Response(
                    status_code=401,
                    headers={
                        "WWW-Authenticate": 'DPoP error="use_dpop_nonce"',
                        "DPoP-Nonce": RS_NONCE,
                    },
                )
                await reply(scope, receive, send)
                return
            rewritten = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
            scope = {
                **scope,
                "headers": [*rewritten, (b"authorization", f"Bearer {token}".encode())],
            }
        await self.app(scope, receive, send)


@contextlib.contextmanager
def dpop_stack(*, nonce: bool = False) -> Iterator[tuple[Stack, DpopResource]]:
    as_served, rs_served = Served().bind(), Served().bind()
    auth = DpopAuthServer(issuer=as_served.url("/oauth"), require_nonce=nonce)
    auth.add_client("lemon", secret="secret")
    mcp_url = rs_served.url("/mcp")
    recorder = Recorder(mcp_server(auth, mcp_url, ["tools"]).streamable_http_app())
    resource = DpopResource(recorder, auth, mcp_url, require_nonce=nonce)
    try:
        as_served.start(auth.app())
        rs_served.start(resource)
        yield Stack(mcp_url=mcp_url, auth=auth, resource_requests=recorder.requests), resource
    finally:
        rs_served.close()
        as_served.close()


def test_an_offered_dpop_binds_the_token_and_every_request_carries_a_fresh_proof():
    with dpop_stack() as (stack, resource):
        auth = build_auth("bound", stack.mcp_url, CC)
        assert run_echo(stack.mcp_url, auth, count=2) == ["echo:m0", "echo:m1"]
        [token_proof] = stack.auth.proofs
        [token] = stack.auth.bound
        sent = [r for r in stack.mcp_requests() if "dpop" in r.headers]
        assert len(sent) >= 3  # initialize, the two calls...
        assert all(r.headers["authorization"] == f"Bearer {token}" for r in sent)  # rewritten
        assert len(resource.proofs) == len(sent)
        assert {p["jkt"] for p in resource.proofs} == {token_proof["jkt"]}
        jtis = [p["jti"] for p in [token_proof, *resource.proofs]]
        assert len(set(jtis)) == len(jtis)
        assert auth.describe()["dpop_bound"] is True


def test_server_nonces_are_taken_up_on_both_sides():
    with dpop_stack(nonce=True) as (stack, resource):
        auth = build_auth("bound", stack.mcp_url, CC)
        assert run_echo(stack.mcp_url, auth, count=2) == ["echo:m0", "echo:m1"]
        first, retried = stack.auth.proofs
        assert "nonce" not in first and retried["nonce"] == AS_NONCE
        assert first["jti"] != retried["jti"]
        assert resource.challenged == 1  # the nonce is kept for the later requests
        assert resource.proofs[0].get("nonce") is None
        assert all(p["nonce"] == RS_NONCE for p in resource.proofs[1:])


def test_dpop_false_keeps_bearer_tokens_even_when_offered():
    with dpop_stack() as (stack, resource):
        auth = build_auth("bearer", stack.mcp_url, {**CC, "dpop": False})
        assert run_echo(stack.mcp_url, auth) == ["echo:m0"]
        assert stack.auth.proofs == [] and stack.auth.bound == {}
        assert resource.proofs == []
        assert stack.bearers()
        assert not [r for r in stack.auth.token_requests() if "dpop" in r.headers]
        assert auth.describe()["dpop_bound"] is False


def test_the_key_is_kept_in_the_secrets_store_with_the_cached_token(agent_dir):
    config = {**CC, "token_secret": "bound-tokens"}
    with dpop_stack() as (stack, resource):
        assert run_echo(stack.mcp_url, build_auth("bound", stack.mcp_url, config)) == ["echo:m0"]
        assert "PRIVATE KEY" in (secrets.get("bound-tokens-dpop") or "")
        # a restarted process: cached token, same key, no token request
        again = build_auth("bound", stack.mcp_url, config)
        assert run_echo(stack.mcp_url, again) == ["echo:m0"]
        assert len(stack.auth.token_requests()) == 1
        assert len({p["jkt"] for p in resource.proofs}) == 1


@pytest.mark.parametrize("value", ["sometimes", 1])
def test_dpop_config_is_validated(value):
    from lemon_skills.mcp.oauth.options import validate_oauth

    assert "oauth.dpop must be auto, true or false" in validate_oauth({**CC, "dpop": value})
