"""A stdlib-only stdio MCP server for start-up benchmarks: waits, then answers the handshake.

It speaks just enough of the handshake era (initialize, tools/list, tools/call echo) and
answers anything else, ``server/discover`` included, with "method not found", so clients fall
back to ``initialize``. ``--delay`` seconds pass before it reads its first message.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": {}}}]


def reply(message: dict[str, object]) -> dict[str, object] | None:
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    if method == "initialize":
        result: dict[str, object] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "light", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "echo"}]}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not found"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=1.0)
    time.sleep(parser.parse_args().delay)
    for line in sys.stdin:
        if line.strip():
            out = reply(json.loads(line))
            if out is not None:
                sys.stdout.write(json.dumps(out) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
