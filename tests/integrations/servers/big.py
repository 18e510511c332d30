"""A stdlib-only stdio MCP server with 362 tools, one destructive and one that returns an image.

    python big.py MARKER_FILE

The recorded tools of tests/data/server_tools.jsonl, ``send_invoice`` (the tool a search
should find), ``erase_records`` (destructive: appends a line to MARKER_FILE when it runs, so a
test can see whether a call reached the server), ``render_chart`` (an image) and read-only
filler tools up to 362.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "data" / "server_tools.jsonl"
TOTAL = 362
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
_AREAS = ("billing", "weather", "kanban", "sensor", "payroll", "inventory", "dns", "backup")
_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}
_OBJECT = {"type": "object", "properties": {"id": {"type": "string"}}}


def tools() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line in CORPUS.read_text("utf-8").splitlines():
        record = json.loads(line)
        name = f"{record['server']}_{record['name']}"
        if name not in seen:
            seen.add(name)
            out.append(
                {
                    "name": name,
                    "description": record.get("description", ""),
                    "inputSchema": record["inputSchema"],
                    "annotations": _READ_ONLY,
                }
            )
    out.append(
        {
            "name": "send_invoice",
            "description": "Send an invoice by email to a customer for an amount in euros.",
            "inputSchema": {
                "type": "object",
                "properties": {"customer": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["customer", "amount"],
            },
            "annotations": {
                "readOnlyHint": False,
                "destructiveHint": False,
                "openWorldHint": False,
            },
        }
    )
    out.append(
        {
            "name": "erase_records",
            "description": "Erase every record of a table permanently.",
            "inputSchema": {
                "type": "object",
                "properties": {"table": {"type": "string"}},
                "required": ["table"],
            },
            "annotations": {"readOnlyHint": False, "destructiveHint": True},
        }
    )
    out.append(
        {
            "name": "render_chart",
            "description": "Render a chart of a series as a PNG image.",
            "inputSchema": _OBJECT,
            "annotations": _READ_ONLY,
        }
    )
    n = 0
    while len(out) < TOTAL:
        area = _AREAS[n % len(_AREAS)]
        out.append(
            {
                "name": f"{area}_metric_{n}",
                "description": f"Read metric number {n} of the {area} dashboard.",
                "inputSchema": _OBJECT,
                "annotations": _READ_ONLY,
            }
        )
        n += 1
    return out


def call(params: dict[str, Any], marker: Path) -> dict[str, Any]:
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "erase_records":
        with marker.open("a", encoding="utf-8") as fh:
            fh.write(f"erased {args.get('table')}\n")
        return {"content": [{"type": "text", "text": f"erased {args.get('table')}"}]}
    if name == "send_invoice":
        text = f"invoice of {args.get('amount')} EUR sent to {args.get('customer')}"
        return {"content": [{"type": "text", "text": text}]}
    if name == "render_chart":
        return {
            "content": [
                {"type": "text", "text": "chart rendered"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ]
        }
    if name == "fail":
        return {"content": [{"type": "text", "text": "boom"}], "isError": True}
    return {"content": [{"type": "text", "text": f"{name}: ok"}]}


def reply(message: dict[str, Any], listed: list[dict[str, Any]], marker: Path) -> Any:
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": message.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "big", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": listed}
    elif method == "tools/call":
        result = call(message.get("params") or {}, marker)
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not found"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    marker = Path(sys.argv[1])
    listed = tools()
    for line in sys.stdin:
        if line.strip():
            out = reply(json.loads(line), listed, marker)
            if out is not None:
                sys.stdout.write(json.dumps(out) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
