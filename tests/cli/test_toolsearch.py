"""``lemon mcp tools --for`` and ``lemon mcp eval``: ranking the MCP tools for a request, and
scoring the ranking over a query file."""

from __future__ import annotations

import json

from lemon_skills.cli import main


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_tools_for_a_request_ranks_and_explains(configured, capsys):
    args = ("--cwd", str(configured))
    code, out, _ = run(capsys, "mcp", "tools", "--for", "structured weather for a city", *args)
    assert code == 0 and out.splitlines()[1].startswith("mcp_rich_structured")
    code, out, _ = run(capsys, "mcp", "tools", "--for", "structured weather", "--explain", *args)
    assert "term:structur" in out and "evidence" in out
    code, out, _ = run(capsys, "mcp", "tools", "--for", "book a flight to Oslo", "--json", *args)
    assert json.loads(out) == []


def test_eval_ranks_a_tool_file_offline(tmp_path, capsys):
    tools = tmp_path / "tools.jsonl"
    records = [
        {"server": "git", "name": "git_log", "description": "Shows the commit logs"},
        {"server": "git", "name": "git_status", "description": "Shows the working tree status"},
    ]
    tools.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    cases = [
        {"query": "show the commit logs", "expected": ["git/git_log"], "kind": "terse"},
        {"query": "order a pizza", "expected": [], "kind": "none"},
    ]
    queries.write_text("\n".join(json.dumps(c) for c in cases), encoding="utf-8")
    code, out, _ = run(
        capsys, "mcp", "eval", "--queries", str(queries), "--tools", str(tools), "--json"
    )
    data = json.loads(out)
    assert code == 0 and data["queries"] == 2 and data["p50_ms"] >= 0
    assert data["recall_at_1"] == data["recall_at_5"] == data["none_rejection"] == 1.0
    assert data["false_rejection"] == 0.0 and data["mrr"] == 1.0
    code, out, _ = run(capsys, "mcp", "eval", "--queries", str(queries), "--tools", str(tools))
    assert "recall@5" in out and "p50" in out
