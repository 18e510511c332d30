"""lemon's stdio transport: lines split across reads, long lines, garbage, a partial last line
and a server that dies mid-message; a multi-megabyte result through a real server."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.stdio import StdioServerParameters
from mcp.shared.message import SessionMessage

from lemon_skills.errors import McpToolError
from lemon_skills.mcp.output.spill import read_result
from lemon_skills.mcp.transport.stdio import (
    LONG_LINE_BYTES,
    SKILL_READ_LINE_BYTES,
    Inflight,
    LineSplitter,
    parse_line,
    stdio_transport,
)
from lemon_skills.tool import estimate_tokens
from tests.mcp.servers import policy


def wire(msg_id: int, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}).encode()


def text_of(item: Any) -> str:
    assert isinstance(item, SessionMessage), item
    message = item.message
    assert isinstance(message, types.JSONRPCResponse)
    return str(message.result["content"][0]["text"])


def test_a_line_split_across_reads_comes_out_once_and_whole():
    first, second = wire(1, "one"), wire(2, "two")
    splitter = LineSplitter()
    assert splitter.feed(first[:7]) == []
    assert splitter.feed(first[7:20]) == []
    lines = splitter.feed(first[20:] + b"\n" + second + b"\n" + b'{"json')
    assert [text_of(parse_line(line)) for line in lines] == ["one", "two"]
    assert splitter.take() == b'{"json'  # the start of the next line waits for its end
    assert splitter.take() == b""


def test_a_long_line_is_handed_out_as_text_and_parses_like_a_short_one():
    text = "é line\n" * (LONG_LINE_BYTES // 6)
    data = wire(7, text)
    splitter = LineSplitter()
    lines = [
        line for i in range(0, len(data), 65536) for line in splitter.feed(data[i : i + 65536])
    ]
    lines += splitter.feed(b"\n")
    assert len(lines) == 1 and isinstance(lines[0], str)  # the bytes are not kept beside it
    item = parse_line(lines[0])
    assert text_of(item) == text
    assert item.message == types.jsonrpc_message_adapter.validate_json(data, by_name=False)


@pytest.mark.parametrize(
    "line",
    [
        b"hello, I am not JSON",
        b'{"not": "json-rpc"}',
        b"",
        b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "\xff"}}',
        bytearray(b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "\xff') + b"x" * LONG_LINE_BYTES,
        "[" * 10 + "x" * LONG_LINE_BYTES,
    ],
    ids=["text", "not-json-rpc", "empty", "bad-utf8", "long-bad-utf8", "long-garbage"],
)
def test_lines_that_are_not_json_rpc_become_errors_not_exceptions(line):
    assert isinstance(parse_line(line), ValueError)


RAW_SERVER = textwrap.dedent(
    """
    import json, os, sys, time

    def out(data):
        os.write(1, data)
        time.sleep(0.05)

    echo = sys.stdin.buffer.readline()
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"echo": echo.decode()}})
    data = message.encode() + b"\\n"
    out(data[:10]); out(data[10:30]); out(data[30:])
    out(b"garbage, not JSON\\n")
    big = {"jsonrpc": "2.0", "id": 2, "result": {"text": "x" * int(sys.argv[1])}}
    out(json.dumps(big).encode() + b"\\n")
    out(b'{"jsonrpc": "2.0", "id": 3, "res')
    """
)


def test_the_transport_delivers_split_long_and_garbage_lines_and_ends_at_a_partial_one(
    tmp_path: Path,
):
    script = tmp_path / "raw.py"
    script.write_text(RAW_SERVER, encoding="utf-8")
    size = LONG_LINE_BYTES * 2
    params = StdioServerParameters(command=sys.executable, args=[str(script), str(size)])
    request = types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")

    async def run() -> list[Any]:
        with (tmp_path / "stderr").open("w", encoding="utf-8") as errlog:
            async with stdio_transport(params, errlog) as (read, write):
                await write.send(SessionMessage(request))
                with anyio.fail_after(20):
                    return [item async for item in read]

    items = anyio.run(run)
    assert len(items) == 4
    echoed = items[0].message.result["echo"]
    assert json.loads(echoed) == request.model_dump(by_alias=True, exclude_unset=True)
    assert isinstance(items[1], ValueError)  # counted by the session, not raised
    assert items[2].message.result["text"] == "x" * size
    assert isinstance(items[3], ValueError)  # the server died mid-message: then EOF


@pytest.mark.slow
def test_a_multi_megabyte_result_is_cut_for_the_model_and_saved_whole(make_source):
    entry = {"name": "policy", "command": sys.executable, "args": [policy.__file__]}
    source = make_source([entry | {"max_result_tokens": 2000}])
    size = 3 * LONG_LINE_BYTES
    result = source.call_tool("mcp_policy_big", {"size": size})
    assert estimate_tokens(result.text) <= 2000
    whole = (policy.LINE * (size // len(policy.LINE) + 1))[:size]
    spilled = result.details["spilled"]
    assert Path(spilled["path"]).read_text(encoding="utf-8") == whole
    assert read_result(spilled["id"], size - 100).startswith(whole[-100:])
    assert source.call_tool("mcp_policy_read", {"key": "k"}).text == "value:k"


HALF_SERVER = textwrap.dedent(
    """
    import os, sys
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="half", log_level="WARNING")

    @server.tool()
    def half() -> str:
        \"\"\"Start an answer, then die.\"\"\"
        sys.stderr.write("half: dying mid-answer\\n")
        sys.stderr.flush()
        os.write(1, b'{"jsonrpc": "2.0", "id": ')
        os._exit(9)

    @server.tool()
    def whole() -> str:
        \"\"\"Answer.\"\"\"
        return "whole"

    server.run()
    """
)


@pytest.mark.slow
def test_a_server_dying_mid_message_fails_the_call_promptly_and_is_respawned(
    make_source, tmp_path: Path
):
    script = tmp_path / "half.py"
    script.write_text(HALF_SERVER, encoding="utf-8")
    source = make_source([{"name": "half", "command": sys.executable, "args": [str(script)]}])
    started = time.monotonic()
    with pytest.raises(McpToolError, match="may have run") as err:
        source.call_tool("mcp_half_half")
    assert time.monotonic() - started < 20  # not the 60 s call timeout
    assert "dying mid-answer" in str(err.value)
    assert source.call_tool("mcp_half_whole").text == "whole"


HUGE_SKILL_SERVER = textwrap.dedent(
    """
    import json, os, sys

    for line in sys.stdin.buffer:
        request = json.loads(line)
        if request["method"] == "resources/read":
            # A "skill" far over the cap, streamed in 1 MiB writes.
            os.write(1, b'{"jsonrpc": "2.0", "id": %d, "result": {"contents": [{"uri": "x", '
                     b'"text": "' % request["id"])
            for _ in range(int(sys.argv[1])):
                os.write(1, b"x" * (1 << 20))
            os.write(1, b'"}]}}\\n')
        else:
            os.write(1, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}})
                     .encode() + b"\\n")
    """
)


def test_a_skill_read_past_the_cap_is_dropped_as_it_arrives_and_the_session_goes_on(
    tmp_path: Path,
):
    script = tmp_path / "huge.py"
    script.write_text(HUGE_SKILL_SERVER, encoding="utf-8")
    megabytes = SKILL_READ_LINE_BYTES // (1 << 20) + 16
    params = StdioServerParameters(command=sys.executable, args=[str(script), str(megabytes)])
    read_req = types.JSONRPCRequest(
        jsonrpc="2.0", id=1, method="resources/read", params={"uri": "skill://big/SKILL.md"}
    )
    ping = types.JSONRPCRequest(jsonrpc="2.0", id=2, method="ping")

    async def run() -> list[Any]:
        with (tmp_path / "stderr").open("w", encoding="utf-8") as errlog:
            async with stdio_transport(params, errlog) as (read, write):
                got = []
                with anyio.fail_after(60):
                    await write.send(SessionMessage(read_req))
                    got.append(await read.receive())
                    await write.send(SessionMessage(ping))
                    got.append(await read.receive())
                return got

    refused, pong = anyio.run(run)
    assert isinstance(refused.message, types.JSONRPCError) and refused.message.id == 1
    assert "longer than" in refused.message.error.message
    assert isinstance(pong.message, types.JSONRPCResponse) and pong.message.id == 2


def test_the_bound_holds_only_while_every_awaited_answer_is_a_skill_read():
    inflight = Inflight()
    inflight.sent(
        types.JSONRPCRequest(
            jsonrpc="2.0", id=1, method="resources/read", params={"uri": "skill://a/SKILL.md"}
        )
    )
    assert inflight.bound() == SKILL_READ_LINE_BYTES
    inflight.sent(types.JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/call", params={}))
    assert inflight.bound() is None  # a tool's answer may be large: nothing is cut
    inflight.answered(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=2, result={})))
    assert inflight.bound() == SKILL_READ_LINE_BYTES
    inflight.sent(types.JSONRPCRequest(jsonrpc="2.0", id=3, method="tools/call", params={}))
    cancel = {"requestId": 3, "reason": "timed out"}
    inflight.sent(
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=cancel)
    )
    assert inflight.bound() == SKILL_READ_LINE_BYTES  # a given-up call no longer counts
    splitter = LineSplitter()
    for _ in range(8):
        assert splitter.feed(b"y" * 1000, bound=2500) == []
    assert splitter.overflowed
    assert splitter.feed(b"tail\nnext\n", bound=2500) == [b"next"]
