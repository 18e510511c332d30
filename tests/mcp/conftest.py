"""Fixtures for the MCP tests: settings reset, sources closed after each test, served apps,
and an authorization server with a protected MCP server."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lemon_skills import settings
from lemon_skills.mcp.source import McpSource
from lemon_skills.selftest.fixtures import server as smoke_server
from lemon_skills.selftest.fixtures.protected import Stack, protected_stack
from lemon_skills.selftest.fixtures.serve import Served


@pytest.fixture(autouse=True)
def reset_settings() -> Iterator[None]:
    """Every test starts without programmatic MCP settings."""
    settings.reset()
    yield
    settings.reset()


@pytest.fixture
def serve() -> Iterator[Callable[[Any], Served]]:
    """Serve ASGI apps on 127.0.0.1 for the duration of the test."""
    running: list[Served] = []

    def start(app: Any) -> Served:
        served = Served(app).__enter__()
        running.append(served)
        return served

    yield start
    for served in running:
        served.stop()
    for served in running:
        served.close()


@pytest.fixture
def make_source(serve: Callable[[Any], Served]) -> Iterator[Callable[..., McpSource]]:
    """Build sources (files and env ignored unless asked) that are closed after the test,
    before any server the test started (``serve`` is torn down after this fixture)."""
    made: list[McpSource] = []

    def make(servers: list[Any] | None = None, **kw: Any) -> McpSource:
        kw.setdefault("include_config", False)
        source = McpSource(servers, **kw)
        made.append(source)
        return source

    yield make
    for source in made:
        source.close()


@pytest.fixture
def http_fixture(serve: Callable[[Any], Served]) -> Served:
    """The smoke fixture over Streamable HTTP (``/mcp``)."""
    return serve(smoke_server.http_app())


@pytest.fixture
def sse_fixture(serve: Callable[[Any], Served]) -> Served:
    """The smoke fixture over legacy SSE (``/sse``)."""
    return serve(smoke_server.sse_app())


@pytest.fixture
def make_stack() -> Iterator[Callable[..., Stack]]:
    """Start a fixture authorization server + protected MCP server (stopped after the test)."""
    with contextlib.ExitStack() as stack:

        def make(**options: Any) -> Stack:
            return stack.enter_context(protected_stack(**options))

        yield make
