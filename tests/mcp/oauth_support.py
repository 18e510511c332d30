"""Driving a protected MCP server through the SDK client with our auth on the httpx2 client."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]


async def echo(
    url: str,
    auth: httpx2.Auth,
    *,
    count: int = 1,
    headers: Mapping[str, str] | None = None,
    between: Callable[[int], Awaitable[None] | None] | None = None,
    mode: str = "legacy",
    timeout: float = 30,
) -> list[str]:
    """Open a session and call ``secured_echo`` ``count`` times (``between(i)`` before call i)."""
    out: list[str] = []
    with anyio.fail_after(timeout):
        async with httpx2.AsyncClient(auth=auth, headers=dict(headers or {})) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]
                for i in range(count):
                    if between is not None:
                        maybe = between(i)
                        if maybe is not None:
                            await maybe
                    result = await client.call_tool("secured_echo", {"message": f"m{i}"})
                    out.append(result.content[0].text)  # type: ignore[union-attr]
    return out


def run_echo(url: str, auth: httpx2.Auth, **kwargs: Any) -> list[str]:
    return anyio.run(lambda: echo(url, auth, **kwargs))


def leaves(exc: BaseException) -> list[BaseException]:
    """The real errors inside (possibly nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaves(sub)]
    return [exc]


def failure(url: str, auth: httpx2.Auth, **kwargs: Any) -> BaseException:
    """Run ``echo`` expecting it to fail; return the root error."""
    try:
        run_echo(url, auth, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the test inspects whatever surfaced
        found = leaves(exc)
        return found[0]
    raise AssertionError("expected the session to fail")


def client_process(url: str, config: str, count: int = 1) -> subprocess.CompletedProcess[str]:
    """Run the fixture client in a new process with this test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "tests.mcp.fixtures.oauth_client", url, config, str(count)],
        env=dict(os.environ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
