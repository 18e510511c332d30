"""The default per-server auth and sampling of ``McpSource``, built from each entry's config,
and the default approver of tool calls that need an operator.

``oauth_factory()`` turns an HTTP entry's ``oauth`` object into a :class:`LemonOAuthProvider`
and ``sampling_factory()`` a ``sampling`` object into the SDK's sampling callback; entries
without them get ``None`` (no auth; no sampling capability advertised). One provider is kept
per entry (name + config digest) for the life of the source, so its in-memory tokens survive a
reconnect and an interactive login is not asked for twice.

Hosts that want to change one aspect wrap or rebuild a default::

    McpSource(auth_factory=oauth_factory(on_authorization=open_browser))
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.session import SamplingFnT

from lemon_skills.approvals.records import DEFAULT_EXPIRES_IN_S, ApprovalContext
from lemon_skills.approvals.store import ApprovalStore
from lemon_skills.mcp.catalog.calls import Approver
from lemon_skills.mcp.config.entries import HttpServer, ServerConfig
from lemon_skills.mcp.oauth.flows import AuthorizationObserverFn, CodeProviderFn
from lemon_skills.mcp.oauth.provider import LemonOAuthProvider, build_auth
from lemon_skills.mcp.sampling.handler import DelegateFn, sampling_callback
from lemon_skills.mcp.session.connect import expand
from lemon_skills.mcp.session.lifecycle import AuthFactory, SamplingFactory

#: The host's decision on one tool call: ``decide({"server", "tool", "name", "arguments"})``.
HostDecision = Callable[[dict[str, Any]], "bool | Awaitable[bool]"]


def oauth_factory(
    *,
    approvals: ApprovalStore | None = None,
    context: ApprovalContext | None = None,
    code_provider: CodeProviderFn | None = None,
    on_authorization: AuthorizationObserverFn | None = None,
) -> AuthFactory:
    """An ``auth_factory`` giving every HTTP entry with ``oauth`` its provider.

    ``approvals`` is where PKCE logins wait for the operator (``mcp_<server>_oauth``; default:
    the agent dir's store); ``code_provider`` replaces the loopback listener and the approval
    with the host's own way of obtaining the code; ``on_authorization`` is told about every
    authorization request (for example to show or open the URL).

    Raises (from the returned factory):
        ConfigError: the entry's oauth config cannot be used (e.g. a named secret is missing).
    """
    providers: dict[tuple[str | None, str], LemonOAuthProvider] = {}
    lock = threading.Lock()

    def build(cfg: ServerConfig) -> httpx2.Auth | None:
        if not isinstance(cfg, HttpServer) or cfg.oauth is None:
            return None
        key = (cfg.name, cfg.digest())
        with lock:
            provider = providers.get(key)
            if provider is None:
                url = expand(cfg.url, os.environ)
                provider = build_auth(
                    cfg.name or url,
                    url,
                    cfg.oauth,
                    approvals=approvals,
                    context=context,
                    code_provider=code_provider,
                    on_authorization=on_authorization,
                )
                providers[key] = provider
            return provider

    return build


def sampling_factory(
    *, delegate: DelegateFn | None = None, approvals: ApprovalStore | None = None
) -> SamplingFactory:
    """A ``sampling_factory`` applying every entry's ``sampling`` policy.

    ``delegate`` is the host's model call, used by ``model`` and ``reviewed_model`` policies
    that do not name their own; ``approvals`` is where ``ops_approval`` reviews wait.
    """

    def build(cfg: ServerConfig) -> SamplingFnT | None:
        if cfg.sampling is None:
            return None
        return sampling_callback(
            cfg.name or cfg.target, cfg.sampling, delegate=delegate, store=approvals
        )

    return build


def call_approver(
    *,
    approvals: ApprovalStore | None = None,
    decide: HostDecision | None = None,
    timeout: float = DEFAULT_EXPIRES_IN_S,
) -> Approver:
    """How a tool call that needs approval is decided: by the host's ``decide`` callback when
    given, else by an operator through the approvals store (``lemon approvals approve ID``
    from another terminal), waiting at most ``timeout`` seconds."""

    async def approve(request: dict[str, Any]) -> bool | str:
        if decide is not None:
            verdict = decide(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            return True if verdict is True else "the host declined it"
        store = approvals or ApprovalStore()
        rationale = (
            f"MCP server {request['server']!r} tool {request['tool']!r} is not annotated as "
            "safe to run unattended (see its server's approve policy)"
        )
        outcome = await store.arequest(
            request["name"], request, rationale=rationale, timeout=timeout
        )
        if outcome.approved:
            return True
        reason = f": {outcome.reason}" if outcome.reason else ""
        return f"approval {outcome.id} was {outcome.status}{reason}"

    return approve
