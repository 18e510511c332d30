"""The default per-server auth and sampling of ``McpSource``, built from each entry's config.

``oauth_factory()`` turns an HTTP entry's ``oauth`` object into a :class:`LemonOAuthProvider`
and ``sampling_factory()`` a ``sampling`` object into the SDK's sampling callback; entries
without them get ``None`` (no auth; no sampling capability advertised). One provider is kept
per entry (name + config digest) for the life of the source, so its in-memory tokens survive a
reconnect and an interactive login is not asked for twice.

Hosts that want to change one aspect wrap or rebuild a default::

    McpSource(auth_factory=oauth_factory(on_authorization=open_browser))
"""

from __future__ import annotations

import os
import threading

import httpx2
from mcp.client.session import SamplingFnT

from lemon_skills.approvals import ApprovalContext, ApprovalStore
from lemon_skills.mcp.config.entries import HttpServer, ServerConfig
from lemon_skills.mcp.connect import expand
from lemon_skills.mcp.manager import AuthFactory, SamplingFactory
from lemon_skills.mcp.oauth.flows import AuthorizationObserverFn, CodeProviderFn
from lemon_skills.mcp.oauth.provider import LemonOAuthProvider, build_auth
from lemon_skills.mcp.sampling.handler import DelegateFn, sampling_callback


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
