"""A stdlib-only stdio MCP server that lists one server's tools of the tool bench corpus.

    python benchmarks/_tool_corpus_server.py --tools shared/bench/tools/tools.jsonl --server git

It answers ``initialize`` and ``tools/list`` with the recorded definitions (name, title,
description, inputSchema, annotations, exactly as dumped) and ``tools/call`` with a fixed
text; anything else gets "method not found". It stands in for the real servers when the
bench corpus is loaded as configured servers.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

_FIELDS = ("name", "title", "description", "inputSchema", "annotations")


def load(path: str, server: str) -> list[dict[str, Any]]:
    """The recorded tools of ``server``, in file order."""
    tools = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            if record["server"] == server:
                tools.append({k: record[k] for k in _FIELDS if record.get(k) is not None})
    return tools


def reply(message: dict[str, Any], server: str, tools: list[dict[str, Any]]) -> Any:
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": server, "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ok"}]}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not found"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", required=True)
    parser.add_argument("--server", required=True)
    args = parser.parse_args()
    tools = load(args.tools, args.server)
    for line in sys.stdin:
        if line.strip():
            out = reply(json.loads(line), args.server, tools)
            if out is not None:
                sys.stdout.write(json.dumps(out) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
