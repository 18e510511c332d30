from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.mcp.fixtures.protected_server import Stack, protected_stack


@pytest.fixture
def make_stack() -> Iterator[Callable[..., Stack]]:
    """Start a fixture authorization server + protected MCP server (stopped after the test)."""
    with contextlib.ExitStack() as stack:

        def make(**options: Any) -> Stack:
            return stack.enter_context(protected_stack(**options))

        yield make
