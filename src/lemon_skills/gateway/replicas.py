"""What gateway replicas on one database share beyond the state stores: the operator's secret
and change notifications.

* The secret (``--state-secret-file`` or ``LEMON_GATEWAY_SECRET``, at least 32 bytes) keys the
  SDK's ``requestState`` seal, so a multi-round-trip request minted by one replica opens on any
  other, and names the deployment in client keys, so an approval recorded for a stateless
  client by one replica is recognised by the next that serves it. Without a secret each
  process seals under its own key and names its own run, as one gateway always did.
* A pin change made anywhere (``lemon mcp approve-changes``, a rug pull seen by a replica) is
  announced on the pins channel of the database; every replica hears it and tells its clients
  their ``tools/list`` changed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lemon_skills.errors import InvalidValue, LemonSkillsError

if TYPE_CHECKING:
    from mcp.server.request_state import RequestStateBoundary

    from lemon_skills.gateway.clients import Clients

SECRET_ENV = "LEMON_GATEWAY_SECRET"
MIN_SECRET_BYTES = 32
#: Names the sealed state, so a token minted by another service on the same key is refused.
AUDIENCE = "lemon-gateway"
#: How long one wait for a change notification blocks its worker thread.
_WAIT_S = 1.0


@dataclass(frozen=True, slots=True)
class Secret:
    """The operator's secret shared by every replica."""

    value: bytes

    def boundary(self) -> RequestStateBoundary:
        """The SDK middleware that seals and opens ``requestState`` under this secret."""
        from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

        security = RequestStateSecurity(keys=[self.value], audience=AUDIENCE)
        return RequestStateBoundary(security, default_audience=AUDIENCE)

    def deployment(self) -> str:
        """A name of the deployment that reveals nothing of the secret."""
        return hmac.new(self.value, b"lemon-gateway/deployment", hashlib.sha256).hexdigest()[:12]


def read_secret(path: Path | None) -> Secret | None:
    """The secret from ``path``, else from ``LEMON_GATEWAY_SECRET``, else None.

    Raises:
        InvalidValue: the file cannot be read or the secret is shorter than 32 bytes.
    """
    if path is not None:
        try:
            raw = path.read_bytes().strip()
        except OSError as exc:
            raise InvalidValue(
                f"cannot read the state secret file {path}: {exc.strerror}"
            ) from None
        where = str(path)
    else:
        env = os.environ.get(SECRET_ENV, "").strip()
        if not env:
            return None
        raw, where = env.encode(), SECRET_ENV
    if len(raw) < MIN_SECRET_BYTES:
        raise InvalidValue(
            f"the state secret in {where} is {len(raw)} bytes; at least {MIN_SECRET_BYTES} "
            "are needed",
            hint='generate one: python -c "import secrets; print(secrets.token_hex(32))"',
        )
    return Secret(raw)


async def relay_pin_changes(clients: Clients) -> None:
    """Tell every client its ``tools/list`` changed whenever any process on the shared
    database announces a pin change; returns at once on the embedded backend (a single
    machine's gateway sees its own pin changes)."""
    from lemon_skills.state import database
    from lemon_skills.state.pins import CHANNEL

    db = database()
    if db is None:
        return
    sub = await anyio.to_thread.run_sync(db.listen, CHANNEL)
    try:
        while True:
            try:
                fired = await anyio.to_thread.run_sync(sub.wait, _WAIT_S, abandon_on_cancel=True)
            except LemonSkillsError:
                await anyio.sleep(_WAIT_S)
                sub = await _resubscribe(db, CHANNEL)
                continue
            if fired:
                for client in clients.all():
                    await client.tools_changed()
    finally:
        sub.close()


async def _resubscribe(db: Any, channel: str) -> Any:
    while True:
        try:
            return await anyio.to_thread.run_sync(db.listen, channel)
        except LemonSkillsError:
            await anyio.sleep(_WAIT_S)
