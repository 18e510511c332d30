"""DPoP (RFC 9449, SEP-1932): sender-constrained access tokens for one MCP server.

A P-256 key pair signs a fresh proof (``typ: dpop+jwt``, ES256, the public key as ``jwk``)
for every token request and every request that presents the token; a proof names the method
and URL (``htm``, ``htu`` without query or fragment), a random ``jti``, ``iat``, for a
resource request the access-token hash ``ath``, and the latest server-provided nonce of that
side (the authorization server's and the resource server's are kept apart, RFC 9449 sections
8 and 9). A token bound to the key is presented with the ``DPoP`` authorization scheme.

The key is kept in the secrets store (PKCS#8 PEM) when the tokens are, so a restarted process
can still use its cached bound token; otherwise it lives as long as the tokens, in memory.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets as random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import anyio.to_thread
import httpx2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from lemon_skills import secrets

logger = logging.getLogger(__name__)

ALGORITHM = "ES256"
SCHEME = "DPoP"
NONCE_HEADER = "DPoP-Nonce"
SECRET_PROVIDER = "mcp_dpop"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class DpopKey:
    """A P-256 key pair with its public JWK and RFC 7638 thumbprint."""

    private: ec.EllipticCurvePrivateKey = field(repr=False)
    jwk: dict[str, str]
    thumbprint: str

    @classmethod
    def generate(cls) -> DpopKey:
        return cls.from_private(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_private(cls, private: ec.EllipticCurvePrivateKey) -> DpopKey:
        numbers = private.public_key().public_numbers()
        jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big")),
        }
        canonical = json.dumps(jwk, sort_keys=True, separators=(",", ":")).encode()
        return cls(private, jwk, b64url(hashlib.sha256(canonical).digest()))

    def pem(self) -> str:
        return self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """A DPoP proof JWT for one request."""
        header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk}
        claims: dict[str, Any] = {
            "jti": random.token_urlsafe(16),
            "htm": method.upper(),
            "htu": target_uri(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        signing_input = f"{_segment(header)}.{_segment(claims)}".encode()
        r, s = decode_dss_signature(self.private.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{signing_input.decode()}.{b64url(signature)}"


def _segment(value: dict[str, Any]) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


def target_uri(url: str) -> str:
    """The ``htu`` of a request: its URL without query and fragment (RFC 9449 4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def load_key(secret_name: str | None) -> DpopKey:
    """The key kept under ``secret_name`` (created and stored on first use); a fresh in-memory
    key when there is no name."""
    if secret_name is None:
        return DpopKey.generate()
    stored = secrets.get(secret_name)
    if stored:
        try:
            private = serialization.load_pem_private_key(stored.encode(), password=None)
        except ValueError:
            logger.warning("replacing the unreadable DPoP key in secret %r", secret_name)
        else:
            if isinstance(private, ec.EllipticCurvePrivateKey):
                return DpopKey.from_private(private)
    key = DpopKey.generate()
    secrets.set(secret_name, key.pem(), provider=SECRET_PROVIDER)
    return key


def nonce_challenge(response: httpx2.Response) -> str | None:
    """The nonce a ``use_dpop_nonce`` answer asks for: a 400 ``{"error": "use_dpop_nonce"}``
    from the token endpoint or a 401 ``WWW-Authenticate: DPoP error="use_dpop_nonce"`` from
    the resource server, each with a ``DPoP-Nonce`` header (None for any other answer). The
    body of a 400 must have been read."""
    nonce = response.headers.get(NONCE_HEADER)
    if not nonce:
        return None
    if response.status_code == 401:
        challenge = response.headers.get("www-authenticate", "")
        return nonce if "use_dpop_nonce" in challenge else None
    if response.status_code == 400:
        try:
            body = json.loads(response.content)
        except (ValueError, httpx2.ResponseNotRead):
            return None
        return nonce if isinstance(body, dict) and body.get("error") == "use_dpop_nonce" else None
    return None


class Binding:
    """The DPoP state of one OAuth client: its key (loaded on first use), whether the access
    token it holds is bound to that key, the latest server-provided nonce per side, and the
    signing algorithms the authorization server offered."""

    def __init__(self, mode: str, secret: str | None) -> None:
        self.mode = mode
        self.bound = False
        self._secret = secret
        self._key: DpopKey | None = None
        self._nonces: dict[str, str] = {}
        self._offered: list[str] = []

    def wanted(self) -> bool:
        """Whether token requests carry a proof: ``on``, or ``auto`` once bound or offered."""
        if self.mode != "auto":
            return self.mode == "on"
        return self.bound or ALGORITHM in self._offered

    async def key(self) -> DpopKey:
        """The key pair, read from (or created in) the secrets store in a worker thread."""
        if self._key is None:
            self._key = await anyio.to_thread.run_sync(load_key, self._secret)
        return self._key

    async def prove_resource(self, request: httpx2.Request, access_token: str) -> None:
        """Present ``access_token`` with the DPoP scheme and a proof carrying its hash."""
        key = await self.key()
        request.headers["Authorization"] = f"{SCHEME} {access_token}"
        request.headers["DPoP"] = key.proof(
            request.method,
            str(request.url),
            access_token=access_token,
            nonce=self._nonces.get("resource"),
        )

    async def prove_token(self, request: httpx2.Request) -> None:
        """Sign a token request."""
        key = await self.key()
        request.headers["DPoP"] = key.proof(
            request.method, str(request.url), nonce=self._nonces.get("token")
        )

    async def take_nonce(
        self, request: httpx2.Request, response: httpx2.Response, side: str
    ) -> bool:
        """Whether ``response`` is a ``use_dpop_nonce`` challenge to a proof ``request`` sent;
        the nonce is kept for ``side`` (``token`` or ``resource``) either way."""
        if "DPoP" not in request.headers:
            return False
        if response.status_code == 400 and NONCE_HEADER in response.headers:
            await response.aread()
        nonce = nonce_challenge(response)
        if nonce is None:
            fresh = response.headers.get(NONCE_HEADER)
            if fresh:
                self._nonces[side] = fresh  # a server may hand out the next nonce any time
            return False
        self._nonces[side] = nonce
        return True

    async def note_offer(self, request: httpx2.Request, response: httpx2.Response) -> None:
        """Keep the authorization server's ``dpop_signing_alg_values_supported`` (the SDK's
        metadata model drops it)."""
        if response.status_code != 200 or "/.well-known/" not in request.url.path:
            return
        try:
            doc = json.loads(await response.aread())
        except ValueError:
            return
        algs = doc.get("dpop_signing_alg_values_supported") if isinstance(doc, dict) else None
        if isinstance(algs, list) and "token_endpoint" in doc:
            self._offered = [a for a in algs if isinstance(a, str)]

    def note_binding(self, response: httpx2.Response) -> httpx2.Response:
        """Remember whether a token response's token is bound; the SDK's token model knows
        only ``Bearer``, so a bound one is handed over as a copy saying so."""
        try:
            body = json.loads(response.content)
        except ValueError:
            return response
        if not isinstance(body, dict) or not isinstance(body.get("token_type"), str):
            return response
        self.bound = body["token_type"].lower() == "dpop"
        if not self.bound:
            return response
        body["token_type"] = "Bearer"
        return httpx2.Response(response.status_code, json=body, request=response.request)
