"""The HTTP exposure guard: what a network client, a page in a browser and a DNS-rebinding
attack get from a guarded app served over real HTTP on loopback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx2 as httpx
import pytest

from lemon_skills.errors import ConfigError, InvalidValue, ServeError
from lemon_skills.tools.serve.guard import (
    GRANT_KEY,
    Exposure,
    Grant,
    check_exposure,
    guard,
    parse_bind,
    read_token_file,
    run_http,
    transport_security,
)


async def echo(scope: Any, receive: Any, send: Any) -> None:
    """Reads the whole body, answers with the grant's agent and the body size."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    size = 0
    while True:
        msg = await receive()
        size += len(msg.get("body", b""))
        if not msg.get("more_body"):
            break
    grant = scope["state"][GRANT_KEY]
    body = json.dumps({"agent": grant.agent if grant else None, "size": size}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def test_a_token_file_holds_tokens_and_their_agents(tmp_path: Path):
    f = tmp_path / "tokens"
    f.write_text("# who may connect\nalpha\n\nbeta  reviewer  # the review agent\n")
    assert read_token_file(f) == (Grant("alpha"), Grant("beta", "reviewer"))
    assert "beta" not in repr(read_token_file(f))  # a token never reaches a log via repr


@pytest.mark.parametrize("text", ["", "# only a comment\n\n", "a b c\n"])
def test_an_empty_or_malformed_token_file_is_refused_naming_it(tmp_path: Path, text: str):
    f = tmp_path / "tokens"
    f.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_token_file(f)
    assert str(f) in str(err.value) and "\n" not in str(err.value)


def test_a_missing_token_file_is_one_line_naming_it(tmp_path: Path):
    with pytest.raises(ConfigError, match="cannot read the token file") as err:
        read_token_file(tmp_path / "nope")
    assert str(tmp_path / "nope") in str(err.value)


def test_binds_parse_and_bad_values_are_usage_errors():
    assert parse_bind("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_bind("[::1]:80") == ("::1", 80)
    assert Exposure("::1", 80).url == "http://[::1]:80/mcp"
    for bad in ("127.0.0.1:99999", "8765", ":8765", "host:port", "a b:1"):
        with pytest.raises(InvalidValue) as err:
            parse_bind(bad)
        assert err.value.exit_code == 2


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.2", "::", "my-laptop.lan"])
def test_a_bind_other_machines_may_reach_needs_tokens(host: str):
    with pytest.raises(InvalidValue, match="without bearer tokens") as err:
        check_exposure(Exposure(host, 8765))
    assert "--token-file" in (err.value.hint or "")
    check_exposure(Exposure(host, 8765, grants=(Grant("t"),)))
    for loop in ("127.0.0.1", "localhost", "::1"):
        check_exposure(Exposure(loop, 8765))


def test_host_and_origin_checks_are_always_on_and_follow_the_bind():
    wide = transport_security(Exposure("0.0.0.0", 9000, allowed_origins=("https://app.example",)))
    assert wide.enable_dns_rebinding_protection
    assert "https://app.example" in wide.allowed_origins
    assert "app.example" in wide.allowed_hosts
    one = transport_security(Exposure("10.1.2.3", 9000, grants=(Grant("t"),)))
    assert one.allowed_hosts == ["10.1.2.3:9000"]
    assert one.allowed_origins == ["http://10.1.2.3:9000"]


@pytest.fixture
def served() -> Iterator[tuple[str, int]]:
    """A guarded echo app on 127.0.0.1 (free port) with one plain and one agent token."""
    exposure = Exposure(
        "127.0.0.1",
        0,
        grants=(Grant("s3cret"), Grant("r3view", "reviewer")),
        allowed_origins=("https://app.example",),
        max_body_bytes=1000,
    )
    urls: list[str] = []
    with anyio.from_thread.start_blocking_portal() as portal:
        future = portal.start_task_soon(
            lambda: run_http(guard(echo, exposure), exposure, on_listening=urls.append)
        )
        deadline = time.monotonic() + 10
        while not urls and time.monotonic() < deadline:
            time.sleep(0.01)
        assert urls, "the server did not start listening"
        url = urls[0]
        yield url, int(url.rsplit(":", 1)[1].split("/")[0])
        future.cancel()


def _post(url: str, headers: dict[str, str], body: bytes = b"{}") -> httpx.Response:
    return httpx.post(url, content=body, headers=headers, timeout=10)


def test_attacks_over_http_get_403_401_and_413(served: tuple[str, int]):
    url, port = served
    ok = {"Authorization": "Bearer s3cret"}
    assert _post(url, ok).json() == {"agent": None, "size": 2}
    # A page on another origin (the browser adds its Origin header).
    assert _post(url, {**ok, "Origin": "https://evil.example"}).status_code == 403
    assert _post(url, {**ok, "Origin": "https://app.example"}).status_code == 200
    # DNS rebinding: the page's own name resolves to 127.0.0.1, its Host header stays.
    assert _post(url, {**ok, "Host": f"evil.example:{port}"}).status_code == 403
    # No token, a wrong one, another scheme.
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic s3cret"}):
        denied = _post(url, headers)
        assert denied.status_code == 401
        assert denied.headers["www-authenticate"].startswith("Bearer")
    # A token bound to an agent profile reaches the app with that agent.
    assert _post(url, {"Authorization": "Bearer r3view"}).json()["agent"] == "reviewer"
    # A body above the cap, declared or streamed.
    assert _post(url, ok, b"x" * 1001).status_code == 413

    def chunks() -> Iterator[bytes]:
        yield from [b"x" * 600, b"x" * 600]

    streamed = httpx.post(url, content=chunks(), headers=ok, timeout=10)
    assert streamed.status_code == 413


def test_a_port_in_use_and_an_unknown_host_are_one_line(served: tuple[str, int]):
    _, port = served
    taken = Exposure("127.0.0.1", port)
    with pytest.raises(ServeError, match="already in use") as err:
        anyio.run(lambda: run_http(echo, taken, on_listening=lambda u: None))
    assert "\n" not in str(err.value)
    unknown = Exposure("no-such-host.invalid", 8765, grants=(Grant("t"),))
    with pytest.raises(ServeError, match="does not resolve"):
        anyio.run(lambda: run_http(echo, unknown, on_listening=lambda u: None))


def test_the_listening_url_is_the_real_port(served: tuple[str, int]):
    url, port = served
    assert url == f"http://127.0.0.1:{port}/mcp"
    assert httpx.get(url, timeout=10).status_code == 401


def test_an_app_that_fails_to_start_is_one_error_not_a_crash():
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no database"})

    urls: list[str] = []
    with pytest.raises(ServeError, match="failed to start"):
        anyio.run(lambda: run_http(broken, Exposure("127.0.0.1", 0), on_listening=urls.append))
    assert urls == []
