"""JWT assertions for the non-interactive grants: a workload's JWT (RFC 7523 jwt-bearer,
workload identity federation) and the enterprise flow's identity assertion grant (SEP-990:
the user's ID token exchanged at the enterprise IdP, RFC 8693, for an ID-JAG).

Tokens are read each time one is needed (files are re-read, so a rotated workload token is
picked up) and never appear in errors or logs.
"""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import anyio.to_thread
import httpx2

from lemon_skills import _proc, secrets
from lemon_skills.errors import CommandError, McpAuthError
from lemon_skills.mcp.oauth.options import IdentityProvider, TokenSource

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
#: How long a token command may run.
COMMAND_TIMEOUT_S = 30.0
IDP_TIMEOUT_S = 30.0


async def read_token(source: TokenSource, *, what: str, server: str) -> str:
    """The JWT ``source`` names, stripped.

    Raises:
        McpAuthError: the file, command or secret gave nothing usable (the reason, not the
            value).
    """
    return await anyio.to_thread.run_sync(_read, source, what, server)


def _read(source: TokenSource, what: str, server: str) -> str:
    try:
        if source.file is not None:
            value = Path(source.file).read_text(encoding="utf-8")
        elif source.command is not None:
            value = _proc.run(source.command, timeout=COMMAND_TIMEOUT_S).stdout
        else:
            value = secrets.get(source.secret or "", env_fallback=True) or ""
    except OSError as exc:
        raise McpAuthError(f"cannot read the {what} file: {exc.strerror}", server=server) from None
    except CommandError as exc:
        raise McpAuthError(f"the {what} command failed: {exc}", server=server) from None
    value = value.strip()
    if not value:
        raise McpAuthError(f"the {what} is empty", server=server)
    return value


async def exchange_for_id_jag(
    idp: IdentityProvider,
    *,
    id_token: str,
    audience: str,
    resource: str,
    scope: str | None,
    server: str,
) -> str:
    """An ID-JAG for ``audience`` (the MCP server's authorization server) and ``resource``,
    from the enterprise IdP's token endpoint (RFC 8693 token exchange).

    Raises:
        McpAuthError: the IdP refused or answered something that is not a token.
    """
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN,
        "requested_token_type": ID_JAG,
        "audience": audience,
        "resource": resource,
    }
    if scope:
        form["scope"] = scope
    headers = {}
    if idp.client_id and idp.client_secret:
        # RFC 6749 2.3.1: each part form-urlencoded before joining and encoding.
        pair = f"{quote(idp.client_id, safe='')}:{quote(idp.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif idp.client_id:
        form["client_id"] = idp.client_id
    async with httpx2.AsyncClient(timeout=IDP_TIMEOUT_S, follow_redirects=False) as http:
        try:
            answer = await http.post(idp.token_endpoint, data=form, headers=headers)
        except httpx2.HTTPError as exc:
            raise McpAuthError(
                f"enterprise IdP token exchange failed: {type(exc).__name__}", server=server
            ) from None
    try:
        body = answer.json()
    except ValueError:
        body = {}
    token = body.get("access_token") if isinstance(body, dict) else None
    if answer.status_code != 200 or not isinstance(token, str) or not token:
        error = body.get("error") if isinstance(body, dict) else None
        raise McpAuthError(
            f"enterprise IdP refused the token exchange (HTTP {answer.status_code}"
            + (f", {error}" if isinstance(error, str) else "")
            + ")",
            server=server,
            hint="check oauth.idp and that the ID token is current",
        )
    return token
