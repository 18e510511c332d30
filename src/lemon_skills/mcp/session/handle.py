"""The state of one configured server as the manager sees it, and its last listing."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from mcp import types

from lemon_skills.mcp.config.entries import ServerConfig
from lemon_skills.mcp.oauth.failure import auth_status
from lemon_skills.mcp.session.connect import Connection, Probe, describe
from lemon_skills.mcp.session.logs import redact

ServerState = Literal["pending", "connecting", "connected", "failed", "stopped"]

#: Lines of a stdio server's stderr that status shows.
STATUS_STDERR_LINES = 20
#: A paginated listing stops after this many pages, so a broken paginator cannot hang us.
MAX_PAGES = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class Listing:
    """What a server offered at ``listed_at`` (anyio clock), unfiltered."""

    tools: tuple[types.Tool, ...] = ()
    resources: tuple[types.Resource, ...] = ()
    templates: tuple[types.ResourceTemplate, ...] = ()
    prompts: tuple[types.Prompt, ...] = ()
    capabilities: dict[str, bool] = field(default_factory=dict)
    listed_at: float = 0.0
    problems: tuple[str, ...] = ()

    def failed(self, what: str) -> bool:
        """Whether the ``resources`` (or its templates) or ``prompts`` listing failed."""
        return any(p.startswith(f"{what}/") for p in self.problems)


@dataclass(eq=False)
class ServerHandle:
    """One server entry: its connection, listing, error history and retry schedule.

    Only the manager's tasks change it, all on one event loop; ``changed`` is replaced and
    set on every change so waiters can re-check.
    """

    key: str
    config: ServerConfig
    state: ServerState = "pending"
    conn: Connection | None = None
    listing: Listing = field(default_factory=Listing)
    version: int = 0
    last_error: str | None = None
    failures: int = 0
    retry_at: float = 0.0
    attempts: int = 0
    stale: bool = False
    #: Bumped when the server says its resources changed: its skills are listed again.
    skills_version: int = 0
    stopped: bool = False
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    instructions: str | None = None
    #: The ``httpx2.Auth`` of the last attempt (kept for its status) and, for a server that
    #: answered 401 without ``oauth``, what it asked for.
    auth: Any = None
    auth_required: dict[str, Any] | None = None
    #: Retry only when forced (an interactive sign-in failed; retrying would ask again).
    hold: bool = False
    #: The last session had come up and then ended: a caller may reconnect without backoff.
    lost: bool = False
    #: What the last connection attempt observed (its stderr, for status).
    probe: Probe | None = None
    wake: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope | None = None

    @property
    def name(self) -> str:
        return self.config.name or self.key

    @property
    def connected(self) -> bool:
        return self.conn is not None and not self.conn.closed.is_set()

    def retry_due(self, now: float) -> bool:
        """Whether a non-forced reconnect may be tried now (backoff elapsed)."""
        return now >= self.retry_at

    def notify(self) -> None:
        """Wake everyone waiting for a change."""
        event, self.changed = self.changed, anyio.Event()
        event.set()

    def request_connect(self) -> int:
        """Ask the server task for a connection attempt; return the attempt number to await."""
        if self.state == "connecting":
            return self.attempts
        self.wake.set()
        return self.attempts + 1

    async def wait_attempt(self, attempt: int, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until attempt ``attempt`` has an outcome."""
        with anyio.move_on_after(timeout):
            while not self.stopped and (self.attempts < attempt or self.state == "connecting"):
                await self.changed.wait()

    def counts(self) -> tuple[int, int, int]:
        """(tools, resources, prompts) as listed, before filters."""
        lst = self.listing
        return len(lst.tools), len(lst.resources) + len(lst.templates), len(lst.prompts)

    def snapshot(self, *, now: float) -> dict[str, Any]:
        """Status fields that do not depend on naming or filters."""
        retry_in = None
        if self.state == "failed" and math.isfinite(self.retry_at):
            retry_in = max(0, round((self.retry_at - now) * 1000))
        out: dict[str, Any] = {
            "connected": self.connected,
            "state": "failed" if self.state == "connected" and not self.connected else self.state,
            "transport": self.config.transport,
            "origin": self.config.origin,
            "target": redact(self.config.target),
            "capabilities": dict(self.listing.capabilities),
            "last_error": None if self.last_error is None else redact(self.last_error),
            "protocol_version": self.protocol_version,
            "server_info": self.server_info,
            "retry_in_ms": retry_in,
            "failures": self.failures,
        }
        if self.probe is not None and self.probe.pipe is not None:
            out["stderr_tail"] = self.probe.stderr.tail(STATUS_STDERR_LINES)
            out["bad_stdout_lines"] = self.probe.protocol_errors
        oauth = auth_status(self.auth)
        if oauth is not None:
            out["oauth"] = oauth
        if self.auth_required is not None:
            out["auth_required"] = self.auth_required
        return out


def capabilities_of(caps: types.ServerCapabilities | None) -> dict[str, bool]:
    """``{"tools", "resources", "prompts"}`` flags from what the server declared."""
    if caps is None:
        return {}
    return {
        "tools": caps.tools is not None,
        "resources": caps.resources is not None,
        "prompts": caps.prompts is not None,
    }


async def fetch_listing(conn: Connection, *, now: float) -> Listing:
    """List tools, resources (and templates) and prompts, as far as the server offers them.

    A failing tools listing fails the whole fetch (the connection is then treated as broken);
    failing resource or prompt listings are recorded in ``problems`` and left empty.
    """
    client = conn.client
    caps = capabilities_of(client.server_capabilities)
    tools: tuple[Any, ...] = ()
    if caps.get("tools", True):
        tools = await _pages(lambda c: client.list_tools(cursor=c), "tools")
    problems: list[str] = []
    resources: tuple[Any, ...] = ()
    templates: tuple[Any, ...] = ()
    prompts: tuple[Any, ...] = ()
    if caps.get("resources"):
        resources = await _optional(
            _pages(lambda c: client.list_resources(cursor=c), "resources"), "resources", problems
        )
        templates = await _optional(
            _pages(lambda c: client.list_resource_templates(cursor=c), "resource_templates"),
            "resources/templates",
            problems,
        )
    if caps.get("prompts"):
        prompts = await _optional(
            _pages(lambda c: client.list_prompts(cursor=c), "prompts"), "prompts", problems
        )
    return Listing(
        tools=tools,
        resources=resources,
        templates=templates,
        prompts=prompts,
        capabilities=caps or {"tools": bool(tools), "resources": False, "prompts": False},
        listed_at=now,
        problems=tuple(problems),
    )


async def _pages(fetch: Any, attr: str) -> tuple[Any, ...]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(getattr(page, attr))
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(items)


async def _optional(fetch: Any, what: str, problems: list[str]) -> tuple[Any, ...]:
    try:
        result: tuple[Any, ...] = await fetch
    except Exception as exc:  # a server's broken optional listing must not cost its tools
        problems.append(f"{what}/list failed: {describe(exc)}")
        return ()
    return result
