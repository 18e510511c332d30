from __future__ import annotations

import anyio
import httpx2
import pytest

from lemon_skills.errors import McpAuthError
from lemon_skills.mcp.oauth.listener import CallbackListener


async def get(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient() as client:
        return await client.get(url)


def test_only_the_matching_state_on_the_right_path_completes_the_login():
    async def main() -> None:
        async with CallbackListener("http://127.0.0.1:0/callback") as listener:
            base = listener.redirect_uri
            assert base.startswith("http://127.0.0.1:") and base.endswith("/callback")
            listener.expect_state("expected-state")
            assert (await get(base.replace("/callback", "/favicon.ico"))).status_code == 404
            assert (await get(base + "?code=c&state=forged")).status_code == 400
            assert (await get(base + "?code=c")).status_code == 400
            ok = await get(base + "?code=the-code&state=expected-state&iss=https://as")
            assert ok.status_code == 200
            assert "Sign-in complete" in ok.text
            assert (await get(base + "?code=again&state=expected-state")).status_code == 400
            with anyio.fail_after(5):
                result = await listener.result()
            assert (result.code, result.state, result.iss) == (
                "the-code",
                "expected-state",
                "https://as",
            )

    anyio.run(main)


def test_an_error_callback_ends_the_flow_with_the_reason():
    async def main() -> None:
        async with CallbackListener("http://127.0.0.1:0/cb") as listener:
            listener.expect_state("s")
            answer = await get(listener.redirect_uri + "?error=access_denied&state=s")
            assert answer.status_code == 400
            with pytest.raises(McpAuthError, match="access_denied"):
                await listener.result()

    anyio.run(main)


def test_the_port_is_released_when_the_flow_ends():
    async def main() -> str:
        async with CallbackListener("http://127.0.0.1:0/cb") as listener:
            uri = listener.redirect_uri
        async with CallbackListener(uri) as again:  # the same fixed port binds again
            assert again.redirect_uri == uri
        return uri

    uri = anyio.run(main)

    async def refused() -> None:
        with pytest.raises(httpx2.ConnectError):
            await get(uri)

    anyio.run(refused)


def test_a_busy_port_is_a_clear_error():
    async def main() -> None:
        async with CallbackListener("http://127.0.0.1:0/cb") as first:
            with pytest.raises(McpAuthError, match="cannot listen"):
                async with CallbackListener(first.redirect_uri):
                    pass

    anyio.run(main)


@pytest.mark.parametrize(
    "uri", ["https://127.0.0.1:1/cb", "http://example.com:1/cb", "http://127.0.0.1/cb"]
)
def test_only_explicit_loopback_http_uris_can_be_listened_on(uri):
    with pytest.raises(McpAuthError):
        CallbackListener(uri)
