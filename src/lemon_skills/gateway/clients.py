"""Who is calling: one ``Client`` per host connection (stdio: the process; HTTP: its token or
session), holding what must never leak to another host: tools it found with ``tool_search``,
tools it approved for good, results it may page through, and its change notifications.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS


@dataclass(eq=False)
class Client:
    """One host's state inside the gateway."""

    key: str
    agent: str | None = None
    #: Tools ``tool_search`` returned to this client: they join its ``tools/list``.
    added: set[str] = field(default_factory=set)
    #: Tools this client approved with "always" (for this gateway's life).
    always: set[str] = field(default_factory=set)
    #: Ids of cut results this client was given (only those can be paged through).
    results: set[str] = field(default_factory=set)
    #: The last handshake-era session seen, for ``list_changed`` notifications.
    session: Any = None
    #: Its own ``McpSource`` (entries with ``"share": false``), and when it last asked.
    source: Any = None
    used: float = 0.0
    #: Listings of its own servers, by agent.
    cache: dict[Any, Any] = field(default_factory=dict)
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    listen: ListenHandler | None = None

    def listener(self) -> ListenHandler:
        """This client's ``subscriptions/listen`` handler (2026-07-28 change stream)."""
        if self.listen is None:
            self.listen = ListenHandler(self.bus)
        return self.listen

    async def tools_changed(self) -> None:
        """Tell this client its ``tools/list`` changed, in the era it speaks."""
        await self.bus.publish(ToolsListChanged())
        session, self.session = self.session, None
        if session is not None:
            try:
                await session.send_tool_list_changed()
                self.session = session
            except Exception:  # a closed connection just misses the news
                return

    async def lists_changed(self, *, tools: bool, resources: bool, prompts: bool) -> None:
        """Forward an upstream ``list_changed`` (handshake era and listen streams)."""
        from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged

        if tools:
            await self.tools_changed()
        if resources:
            await self.bus.publish(ResourcesListChanged())
        if prompts:
            await self.bus.publish(PromptsListChanged())
        session = self.session
        if session is None:
            return
        try:
            if resources:
                await session.send_resource_list_changed()
            if prompts:
                await session.send_prompt_list_changed()
        except Exception:  # a closed connection just misses the news
            self.session = None


@dataclass(frozen=True, slots=True)
class Calling:
    """The request being served: its client and its SDK request context."""

    client: Client
    ctx: Any


#: Set for the length of one request, so callbacks deep in ``McpSource`` (the approver, the
#: progress callback) reach the host that made the call.
calling: contextvars.ContextVar[Calling | None] = contextvars.ContextVar("calling", default=None)

KeyFn = Callable[[Any], "tuple[str, str | None]"]


def stdio_key(ctx: Any) -> tuple[str, str | None]:
    """Over stdio the client is the process: one key, no agent binding."""
    return "stdio", None


class Clients:
    """Every client seen, by key; ``key_of(ctx)`` says which client a request is from."""

    def __init__(
        self, key_of: KeyFn = stdio_key, *, agent: str | None = None, run: str | None = None
    ) -> None:
        self.key_of = key_of
        self.agent = agent
        self._all: dict[str, Client] = {}
        # Keys name this gateway run too: an approval decided for a client of an earlier run
        # (recorded under its key) can never run a call in this one. Replicas of one
        # deployment pass the deployment's name, so they recognise each other's clients.
        self._run = run or uuid.uuid4().hex[:12]

    def of(self, ctx: Any) -> Client:
        """The client that sent ``ctx``'s request (created on first sight)."""
        key, agent = self.key_of(ctx)
        key = f"{self._run}/{key}"
        client = self._all.get(key)
        if client is None:
            client = self._all[key] = Client(key=key, agent=agent or self.agent)
        session = getattr(ctx, "session", None)
        if session is not None and not modern(ctx):
            client.session = session
        return client

    def all(self) -> list[Client]:
        """Every client seen so far."""
        return list(self._all.values())


def modern(ctx: Any) -> bool:
    """Whether the request speaks the 2026-07-28 era (no handshake, no standing channel)."""
    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS
