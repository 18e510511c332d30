"""One server's handle and listing: every page of a paginated listing, a broken optional
listing that costs only itself, and the status fields of a failed server."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import types

from lemon_skills.mcp.config.entries import StdioServer
from lemon_skills.mcp.session.handle import MAX_PAGES, ServerHandle, capabilities_of, fetch_listing


def tool(name: str) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object"})


class Client:
    """A session double: tools in pages of two, resources fine, prompts broken."""

    def __init__(self, caps: types.ServerCapabilities | None, names: list[str]) -> None:
        self.server_capabilities = caps
        self.names = names
        self.cursors: list[str | None] = []

    async def list_tools(self, cursor: str | None = None) -> Any:
        self.cursors.append(cursor)
        start = int(cursor or 0)
        nxt = str(start + 2) if start + 2 < len(self.names) else None
        return SimpleNamespace(
            tools=[tool(n) for n in self.names[start : start + 2]], next_cursor=nxt
        )

    async def list_resources(self, cursor: str | None = None) -> Any:
        res = types.Resource(uri="fx://a", name="A")
        return SimpleNamespace(resources=[res], next_cursor=None)

    async def list_resource_templates(self, cursor: str | None = None) -> Any:
        return SimpleNamespace(resource_templates=[], next_cursor=None)

    async def list_prompts(self, cursor: str | None = None) -> Any:
        raise RuntimeError("prompt store offline")


CAPS = types.ServerCapabilities(
    tools=types.ToolsCapability(),
    resources=types.ResourcesCapability(),
    prompts=types.PromptsCapability(),
)


def listing_of(client: Client) -> Any:
    return anyio.run(lambda: fetch_listing(SimpleNamespace(client=client), now=7.0))


def test_every_page_is_listed_and_a_broken_prompt_listing_costs_only_the_prompts():
    client = Client(CAPS, ["a", "b", "c", "d", "e"])
    listing = listing_of(client)
    assert [t.name for t in listing.tools] == ["a", "b", "c", "d", "e"]
    assert client.cursors == [None, "2", "4"]
    assert [r.uri for r in listing.resources] == ["fx://a"] and listing.prompts == ()
    assert listing.problems == ("prompts/list failed: RuntimeError: prompt store offline",)
    assert listing.failed("prompts") and not listing.failed("resources")
    assert listing.capabilities == {"tools": True, "resources": True, "prompts": True}
    assert listing.listed_at == 7.0


def test_a_paginator_that_never_ends_is_cut_off():
    class Endless(Client):
        async def list_tools(self, cursor: str | None = None) -> Any:
            return SimpleNamespace(tools=[tool("t")], next_cursor="again")

    assert len(listing_of(Endless(CAPS, [])).tools) == MAX_PAGES


def test_a_server_that_declares_nothing_is_still_asked_for_tools_only():
    listing = listing_of(Client(None, ["a"]))
    assert [t.name for t in listing.tools] == ["a"]
    assert listing.capabilities == {"tools": True, "resources": False, "prompts": False}
    assert capabilities_of(types.ServerCapabilities(tools=types.ToolsCapability())) == {
        "tools": True,
        "resources": False,
        "prompts": False,
    }


def test_a_failed_servers_status_says_when_it_is_retried():
    handle = ServerHandle(key="k", config=StdioServer(name="git", command="srv"))
    assert handle.name == "git" and not handle.connected
    handle.state, handle.retry_at, handle.failures = "failed", 12.5, 2
    handle.last_error = "executable not found: srv"
    snap = handle.snapshot(now=10.0)
    assert (snap["state"], snap["retry_in_ms"], snap["failures"]) == ("failed", 2500, 2)
    assert (snap["transport"], snap["target"], snap["last_error"]) == (
        "stdio",
        "srv",
        "executable not found: srv",
    )
    assert not handle.retry_due(12.0) and handle.retry_due(12.5)


def test_asking_for_a_connection_while_one_is_underway_joins_it():
    handle = ServerHandle(key="k", config=StdioServer(name="git", command="srv"))
    assert handle.request_connect() == 1 and handle.wake.is_set()
    handle.state = "connecting"
    assert handle.request_connect() == 0  # the attempt in progress


@pytest.mark.parametrize("stopped", [False, True])
def test_waiting_for_an_attempt_ends_with_its_outcome_or_the_timeout(stopped):
    handle = ServerHandle(key="k", config=StdioServer(name="git", command="srv"))
    handle.stopped = stopped

    async def main() -> float:
        start = anyio.current_time()
        await handle.wait_attempt(1, timeout=0.05)
        return anyio.current_time() - start

    waited = anyio.run(main)
    assert (waited < 0.05) if stopped else (waited >= 0.05)
