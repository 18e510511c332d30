"""A hand-written 2026-07-28 (stateless) MCP server for tests: ``server/discover``, per-request
``_meta``, multi round-trip tool calls (SEP-2322), ``x-mcp-header`` tools (SEP-2243) and a
JSON Schema 2020-12 tool. Every JSON-RPC request is recorded with its HTTP headers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

VERSION = "2026-07-28"
STATE = '{"nonce": "n-1", "note": "opaque, echo me byte for byte"}'
CONFIRM = {
    "method": "elicitation/create",
    "params": {
        "message": "Confirm?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}
ASK_MODEL = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 8,
    },
}
RICH_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addr",
            "type": "object",
            "properties": {"street": {"type": "string"}},
            "unevaluatedProperties": False,
        }
    },
    "properties": {
        "home": {"$ref": "#/$defs/address"},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        "kind": {"anyOf": [{"const": "a"}, {"const": "b"}]},
        "remote": {"$ref": "https://schemas.invalid/never-fetched.json"},
    },
    "if": {"required": ["kind"]},
    "then": {"required": ["home"]},
    "additionalProperties": False,
}


def _tool(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "inputSchema": schema or {"type": "object", "properties": {}}}


TOOLS = [
    _tool("echo_state"),
    _tool("no_state"),
    _tool("ask_model"),
    _tool("plain"),
    _tool("no_result_type"),
    _tool(
        "headers",
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "note": {"type": "string", "x-mcp-header": "Note"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                "body": {"type": "string"},
            },
        },
    ),
    _tool(
        "bad_header",
        {"type": "object", "properties": {"data": {"type": "object", "x-mcp-header": "Data"}}},
    ),
    _tool("rich", RICH_SCHEMA),
]


@dataclass
class Seen:
    """One JSON-RPC request: its id, method, params and HTTP headers (lower-case)."""

    id: Any
    method: str
    params: dict[str, Any]
    headers: dict[str, str]


@dataclass
class ModernServer:
    requests: list[Seen] = field(default_factory=list)

    def calls(self, tool: str) -> list[Seen]:
        return [
            r for r in self.requests if r.method == "tools/call" and r.params.get("name") == tool
        ]

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/mcp", self._post, methods=["POST"])])

    async def _post(self, request: Request) -> Response:
        body = json.loads(await request.body())
        headers = {k.lower(): v for k, v in request.headers.items()}
        params = body.get("params") or {}
        self.requests.append(Seen(body.get("id"), body.get("method", ""), params, headers))
        if "id" not in body:
            return Response(status_code=202)
        result = self._answer(body["method"], params)
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return {
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "private",
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "modern", "version": "1.0.0"},
            }
        if method == "tools/list":
            return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": TOOLS}
        if method == "tools/call":
            return self._call(params)
        return {"resultType": "complete"}

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params["name"]
        answers = params.get("inputResponses")
        if name == "echo_state" and answers is None:
            return _needs({"confirm": CONFIRM}, state=STATE)
        if name == "no_state" and answers is None:
            return _needs({"confirm": CONFIRM})
        if name == "ask_model" and answers is None:
            return _needs({"model": ASK_MODEL})
        text = json.dumps({"answers": answers}) if answers is not None else name
        done = {"content": [{"type": "text", "text": text}]}
        return done if name == "no_result_type" else {"resultType": "complete", **done}


def _needs(requests: dict[str, Any], state: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        out["requestState"] = state
    return out
