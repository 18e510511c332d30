"""What a 2026-07-28 server sees of lemon's requests and what the host sees of its tools:
configured headers and ``Mcp-Param-*`` headers mirrored from ``x-mcp-header`` parameters
(SEP-2243), tools with invalid annotations left out, and JSON Schema 2020-12 input schemas
handed to the host unchanged (ToolRegistry, exporters, ``lemon mcp tools --json``)."""

from __future__ import annotations

import base64
import json
import socket

import pytest

from lemon_skills.cli import main
from tests.mcp.servers.modern import RICH_SCHEMA, ModernServer

pytestmark = pytest.mark.usefixtures("trusted_projects")


@pytest.fixture
def server_url(serve):
    server = ModernServer()
    return server, serve(server.app()).url("/mcp")


def test_parameters_are_mirrored_into_encoded_headers(server_url, make_source, monkeypatch):
    server, url = server_url
    monkeypatch.setenv("LEMON_TEST_TEAM", "blue")
    entry = {"name": "modern", "url": url, "headers": {"X-Team": "${LEMON_TEST_TEAM}"}}
    source = make_source([entry])
    args = {"region": "us-west1", "note": " padded ", "flag": None, "body": "not mirrored"}
    assert not source.call_tool("mcp_modern_headers", args).is_error
    [call] = server.calls("headers")
    assert call.headers["mcp-param-region"] == "us-west1"
    encoded = base64.b64encode(b" padded ").decode()
    assert call.headers["mcp-param-note"] == f"=?base64?{encoded}?="
    assert "mcp-param-flag" not in call.headers  # null: omitted
    assert not [h for h in call.headers if h.startswith("mcp-param-") and "body" in h]
    assert call.headers["mcp-method"] == "tools/call"
    assert call.headers["mcp-name"] == "headers"
    assert all(r.headers["x-team"] == "blue" for r in server.requests)


def test_a_tool_with_an_invalid_header_annotation_is_left_out(server_url, make_source):
    _, url = server_url
    names = {s.target for s in make_source([{"name": "modern", "url": url}]).tool_specs()}
    assert "bad_header" not in names
    assert {"headers", "rich", "plain"} <= names


def test_input_schemas_reach_the_host_unchanged(server_url, make_source, monkeypatch):
    _, url = server_url
    source = make_source([{"name": "modern", "url": url}])
    tool = next(t for t in source.discover_tools() if t.name == "mcp_modern_rich")
    assert tool.to_openai()["function"]["parameters"] == RICH_SCHEMA
    assert tool.to_anthropic()["input_schema"] == RICH_SCHEMA
    [spec] = [s for s in source.tool_specs() if s.target == "rich"]
    assert spec.input_schema == RICH_SCHEMA
    # 2020-12 keywords are enforced locally; the remote $ref is never fetched
    bad = tool.call({"pair": ["a", "not-an-integer"]})
    assert bad.is_error and "Invalid parameters" in bad.text
    assert not tool.call({"pair": ["a", 1]}).is_error
    looked_up: list[object] = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: looked_up.append(a[0]) or [])
    assert not tool.call({"remote": {"anything": 1}}).is_error  # left to the server
    assert looked_up == []


def test_mcp_tools_json_prints_the_schema_unchanged(server_url, project, capsys):
    _, url = server_url
    (project / ".lemon").mkdir()
    doc = {"servers": [{"name": "modern", "url": url}]}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(doc), encoding="utf-8")
    code = main(["mcp", "tools", "--json", "--cwd", str(project)])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0
    [rich] = [r for r in rows if r["tool"] == "rich"]
    assert rich["input_schema"] == RICH_SCHEMA
