"""One MCP session: variable expansion, the pre-flight check, readable failures and a transport
given in place of the entry's own (served in this process: nothing is spawned)."""

from __future__ import annotations

import os
import sys

import anyio
import httpx2
import pytest
from mcp.client._memory import InMemoryTransport
from mcp.shared.exceptions import MCPError

from lemon_skills.errors import McpConnectError
from lemon_skills.mcp.config.entries import HttpServer, StdioServer
from lemon_skills.mcp.session.connect import (
    Probe,
    connect,
    describe,
    expand,
    startup_failure,
    stdio_parameters,
)
from lemon_skills.mcp.source import McpSource
from tests.helpers.mcp import in_process, rich
from tests.mcp.servers import rich as rich_server


def test_variables_expand_with_defaults_and_an_unset_one_says_how_to_fix_it():
    env = {"HOST": "h", "EMPTY": ""}
    assert expand("${HOST}:${PORT:-80}/${EMPTY}", env) == "h:80/"
    with pytest.raises(McpConnectError, match="PORT is not set") as err:
        expand("${PORT}", env)
    assert err.value.hint == "export PORT=... or write ${PORT:-default}"


def test_the_child_gets_only_the_entrys_env_expanded_and_a_missing_command_is_caught_first(
    monkeypatch,
):
    monkeypatch.setenv("TEST_REGION", "eu")
    entry = StdioServer(
        name="x", command=sys.executable, args=("-m", "${TEST_REGION}"), env={"R": "${TEST_REGION}"}
    )
    params = stdio_parameters(entry, os.environ)
    assert (params.args, params.env) == (["-m", "eu"], {"R": "eu"})
    missing = StdioServer(name="x", command="npx -y some-pkg")
    with pytest.raises(McpConnectError, match="executable not found: npx -y some-pkg") as err:
        stdio_parameters(missing, os.environ)
    assert '"command": "npx", "args": ["-y", "some-pkg"]' in str(err.value)


def test_failures_read_as_one_line_with_the_servers_last_words():
    assert describe(ExceptionGroup("g", [MCPError(1, "no")])) == "no"
    assert describe(FileNotFoundError(2, "No such file or directory", "srv")) == (
        "No such file or directory: srv"
    )
    assert describe(RuntimeError()) == "RuntimeError"
    probe = Probe()
    probe.closed.set()
    probe.protocol_errors = 2
    probe.stderr.feed(b"fatal: planned\n")
    probe.stderr.finish()
    text = startup_failure(EOFError("eof"), probe, StdioServer(name="x", command="srv"))
    assert text.startswith("server exited during startup (EOFError: eof)")
    assert "it wrote 2 line(s) that are not JSON-RPC to stdout" in text
    assert text.endswith("stderr: fatal: planned")
    http = Probe(http_status=503)
    reason = startup_failure(httpx2.ConnectError("refused"), http, HttpServer(url="http://h/mcp"))
    assert reason == "cannot connect: refused (HTTP 503)"


def test_a_given_transport_replaces_the_entrys_own():
    # The entry's command does not exist: only the given in-process server can answer.
    entry = StdioServer(name="x", command="lemon-test-no-such-command")

    async def main() -> tuple[str, str]:
        async with connect(entry, transport=InMemoryTransport(rich_server.build())) as conn:
            result = await conn.client.call_tool("pid", {})
            assert not conn.gone()
            return result.content[0].text, conn.stderr_tail()  # type: ignore[union-attr]

    assert anyio.run(main) == (str(os.getpid()), "")


def test_a_source_serves_entries_from_the_transport_factory_given_or_configured(in_memory):
    configured = McpSource([rich("c")], include_config=False)
    given = McpSource(
        [rich("g")], include_config=False, transport_factory=lambda cfg: in_process(cfg)
    )
    try:
        assert configured.call_tool("mcp_c_pid").text == str(os.getpid())
        assert given.call_tool("mcp_g_pid").text == str(os.getpid())
    finally:
        configured.close()
        given.close()


def test_an_unreachable_url_is_named_without_its_credentials(make_source):
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://user:hunter2@127.0.0.1:{port}/mcp?api_key=SECRET"
    source = make_source([{"name": "web", "url": url}])
    assert source.discover_tools() == []
    error = source.status()["servers"]["web"]["last_error"]
    assert f"cannot connect to http://127.0.0.1:{port}/mcp:" in error
    assert "hunter2" not in error and "SECRET" not in error
