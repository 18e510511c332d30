"""MCP server entries: the three transports as frozen records (parsing is in ``parse.py``).

Accepted shapes for one entry (a dict, a tuple as in the design document, or a record):

    {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "env": {...}, "cwd": "."}
    {"type": "http", "url": "https://host/mcp", "headers": {...}, "oauth": {...}}
    {"type": "sse", "url": "http://host/sse", "timeout_ms": 10000}
    ("stdio", "npx", ["-y", "server"]), ("http", url, {"allow_tools": [...]}), ("sse", url)

``type`` may be left out: ``command`` means stdio, a ``url`` ending in ``/sse`` means SSE and
any other ``url`` Streamable HTTP (``streamable-http``/``streamableHttp`` are accepted too).
``oauth`` and ``sampling`` are checked to be objects and kept opaque for the auth and sampling
layers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lemon_skills.mcp.oauth.options import interactive_login_ms
from lemon_skills.mcp.session.logs import redact, redact_argv

Transport = Literal["stdio", "http", "sse"]
ProtocolMode = Literal["auto", "legacy", "2026-07-28"]
Origin = Literal["programmatic", "env", "global", "project", "file"]

#: How long a server may take from spawn/dial to its first listing. Generous on purpose: ten
#: Python servers started together need 6-8 s on a 2-core machine.
DEFAULT_READY_TIMEOUT_MS = 20_000
#: Per request (tools/call, resources/read, ...) unless the entry says otherwise.
DEFAULT_TIMEOUT_MS = 60_000
#: How far progress notifications may extend one request in total.
DEFAULT_MAX_TOTAL_TIMEOUT_MS = 600_000

PROTOCOL_MODES: tuple[ProtocolMode, ...] = ("auto", "legacy", "2026-07-28")
Approve = Literal["never", "destructive", "always"]
Pinning = Literal["withhold", "warn", "off"]
APPROVE_MODES: tuple[Approve, ...] = ("never", "destructive", "always")
PINNING_MODES: tuple[Pinning, ...] = ("withhold", "warn", "off")
#: A tool result above this many estimated tokens goes to a file; the model gets its head.
DEFAULT_MAX_RESULT_TOKENS = 25_000
FILTER_KEYS = (
    "allow_tools",
    "block_tools",
    "allow_resources",
    "block_resources",
    "allow_prompts",
    "block_prompts",
)
#: Every key an entry may have (``lemon mcp validate`` warns about any other); ``*_ms`` keys
#: may also be spelled with dashes.
ENTRY_KEYS = frozenset(
    {
        *("type", "transport", "name", "enabled", "disabled", "protocol"),
        *("command", "args", "env", "cwd", "url", "headers", "oauth", "sampling"),
        *("sampling_policy", "ready_timeout_ms", "timeout_ms", "max_total_timeout_ms"),
        *("always_load", "skills", "share"),
        *("max_result_tokens", "approve", "approve_tools", "pinning"),
        *FILTER_KEYS,
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Filters:
    """Exact allow/block lists; an empty allow list allows everything not blocked."""

    allow_tools: tuple[str, ...] = ()
    block_tools: tuple[str, ...] = ()
    allow_resources: tuple[str, ...] = ()
    block_resources: tuple[str, ...] = ()
    allow_prompts: tuple[str, ...] = ()
    block_prompts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        """The non-empty lists, keyed as in the config file."""
        return {k: list(v) for k in FILTER_KEYS if (v := getattr(self, k))}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    """What a host does around this server's tools (see docs/mcp-policy.md).

    ``max_result_tokens``: a bigger result is saved to a file and the model gets its head (0:
    no limit). ``approve``: which calls wait for an operator (``destructive``: tools not
    annotated read-only, or annotated destructive); ``approve_tools`` overrides it per tool.
    ``pinning``: a tool whose name, description or schema changed since first seen, or whose
    description hides instructions, is withheld until approved (``warn``: kept and reported).
    """

    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS
    approve: Approve = "never"
    approve_tools: Mapping[str, Approve] = field(default_factory=dict)
    pinning: Pinning = "withhold"

    def approve_mode(self, tool: str) -> Approve:
        """The approval mode of ``tool``."""
        return self.approve_tools.get(tool, self.approve)

    def to_dict(self) -> dict[str, Any]:
        """The policy as the config file spells it."""
        out: dict[str, Any] = {
            "max_result_tokens": self.max_result_tokens,
            "approve": self.approve,
            "pinning": self.pinning,
        }
        if self.approve_tools:
            out["approve_tools"] = dict(self.approve_tools)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerBase:
    """Fields every transport shares.

    ``name`` is the model-facing server name once resolved (``mcp_<name>_<tool>``); ``None``
    on a freshly parsed entry that did not give one. ``origin`` and ``base_dir`` say where the
    entry came from and do not take part in equality.
    """

    name: str | None = None
    filters: Filters = field(default_factory=Filters)
    ready_timeout_ms: int = DEFAULT_READY_TIMEOUT_MS
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_total_timeout_ms: int = DEFAULT_MAX_TOTAL_TIMEOUT_MS
    protocol: ProtocolMode = "auto"
    enabled: bool = True
    oauth: Mapping[str, Any] | None = None
    sampling: Mapping[str, Any] | None = None
    #: Tools sent to the model even when deferred loading holds the others back: tool names
    #: as the server lists them, or ``("*",)`` for every tool of the server.
    always_load: tuple[str, ...] = ()
    #: Whether the skills this server offers (SEP-2640) are used: off until the user says so.
    skills: bool = field(default=False, compare=False)
    #: One connection for every client of a gateway (true), or one per client (false).
    share: bool = field(default=True, compare=False)
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    origin: Origin = field(default="programmatic", compare=False)
    #: False for a project entry whose file the user has not trusted: listed, never started.
    trusted: bool = field(default=True, compare=False)
    #: The name as the config spells it, when naming changed it (``my-skills`` -> ``my_skills``).
    given_name: str | None = field(default=None, compare=False)
    base_dir: Path | None = field(default=None, compare=False)

    @property
    def transport(self) -> Transport:
        raise NotImplementedError

    @property
    def target(self) -> str:
        """The command line or URL, for listings."""
        raise NotImplementedError

    def connect_budget_s(self) -> float:
        """How long one connection attempt may take: ``ready_timeout_ms``, plus the sign-in
        time (``oauth.authorization_timeout_ms``) of an interactive OAuth login."""
        login_ms = interactive_login_ms(self.oauth) if self.oauth is not None else None
        return (self.ready_timeout_ms + (login_ms or 0)) / 1000

    def identity(self) -> dict[str, Any]:
        """Everything that decides which server process/session this is (name excluded)."""
        out = _identity_common(self)
        out["transport"] = self.transport
        return out

    def digest(self) -> str:
        """A stable hash of ``identity()``: equal entries share one connection."""
        blob = json.dumps(self.identity(), sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """A JSON view for listings; header and env values and secrets in the target
        (``logs.redact``) are redacted."""
        out: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if self.given_name is not None:
            out["config_name"] = self.given_name
        out["origin"] = self.origin
        out["enabled"] = self.enabled
        out["ready_timeout_ms"] = self.ready_timeout_ms
        out["timeout_ms"] = self.timeout_ms
        out["max_total_timeout_ms"] = self.max_total_timeout_ms
        out["protocol"] = self.protocol
        out.update(self.filters.to_dict())
        out.update(self.policy.to_dict())
        if self.oauth is not None:
            out["oauth"] = {"configured": True}
        if self.sampling is not None:
            out["sampling"] = {"configured": True}
        if self.always_load:
            out["always_load"] = list(self.always_load)
        if self.skills:
            out["skills"] = "enabled"
        if not self.share:
            out["share"] = False
        return out

    def pins(self, tool: str) -> bool:
        """Whether ``always_load`` names ``tool`` (or every tool)."""
        return "*" in self.always_load or tool in self.always_load


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioServer(ServerBase):
    """A server launched as a subprocess speaking newline-delimited JSON-RPC on stdio."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def transport(self) -> Transport:
        return "stdio"

    @property
    def target(self) -> str:
        return " ".join([self.command, *self.args])

    def effective_cwd(self) -> Path | None:
        """The directory the process starts in: ``cwd`` (relative to the entry's project), else
        the project directory for project entries, else the caller's directory."""
        if self.cwd is not None:
            path = Path(self.cwd).expanduser()
            return path if path.is_absolute() or self.base_dir is None else self.base_dir / path
        return self.base_dir

    def identity(self) -> dict[str, Any]:
        out = ServerBase.identity(self)
        cwd = self.effective_cwd()
        out.update(command=self.command, args=list(self.args), env=dict(self.env))
        out["cwd"] = str(cwd) if cwd is not None else None
        return out

    def to_dict(self) -> dict[str, Any]:
        out = ServerBase.to_dict(self)
        out.update(command=redact(self.command), args=redact_argv(self.args), cwd=self.cwd)
        out["env"] = dict.fromkeys(self.env, "***")
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class _UrlServer(ServerBase):
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return self.url

    def identity(self) -> dict[str, Any]:
        out = ServerBase.identity(self)
        out.update(url=self.url, headers=dict(self.headers))
        return out

    def to_dict(self) -> dict[str, Any]:
        out = ServerBase.to_dict(self)
        out["url"] = redact(self.url)
        out["headers"] = dict.fromkeys(self.headers, "***")
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpServer(_UrlServer):
    """A Streamable HTTP server (one endpoint, POST + optional SSE responses)."""

    @property
    def transport(self) -> Transport:
        return "http"


@dataclass(frozen=True, slots=True, kw_only=True)
class SseServer(_UrlServer):
    """A legacy HTTP+SSE server (a GET event stream plus a POST endpoint it announces)."""

    @property
    def transport(self) -> Transport:
        return "sse"


ServerConfig = StdioServer | HttpServer | SseServer


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigIssue:
    """One invalid entry: where it came from, what it was and why it was refused."""

    reason: str
    entry: Any = None
    index: int | None = None
    name: str | None = None
    origin: Origin = "programmatic"
    path: Path | None = None

    def where(self) -> str:
        """``<path or origin> servers[<i>] (<name>)``."""
        parts = [str(self.path) if self.path else self.origin]
        if self.index is not None:
            parts.append(f"entry {self.index}")
        if self.name:
            parts.append(f"({self.name})")
        return " ".join(parts)

    def __str__(self) -> str:
        return f"{self.where()}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON view for status and ``lemon mcp validate --json``."""
        return {
            "origin": self.origin,
            "path": str(self.path) if self.path else None,
            "index": self.index,
            "name": self.name,
            "reason": self.reason,
        }


def _identity_common(cfg: ServerBase) -> dict[str, Any]:
    return {
        "filters": cfg.filters.to_dict(),
        "ready_timeout_ms": cfg.ready_timeout_ms,
        "timeout_ms": cfg.timeout_ms,
        "max_total_timeout_ms": cfg.max_total_timeout_ms,
        "protocol": cfg.protocol,
        "oauth": cfg.oauth,
        "sampling": cfg.sampling,
        "policy": cfg.policy.to_dict(),
    }
