"""Oversized results against a server that returns huge text and blobs (stdio and HTTP): the
model gets the head and a summary under the budget, the file holds all of it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from lemon_skills.mcp.output.spill import read_result, read_result_tool, results_dir
from lemon_skills.tool import estimate_tokens
from tests.mcp.servers import policy

SERVER = Path(policy.__file__)


def entry(**extra: Any) -> dict[str, Any]:
    return {"name": "policy", "command": sys.executable, "args": [str(SERVER)]} | extra


def expected(size: int) -> str:
    return (policy.LINE * (size // len(policy.LINE) + 1))[:size]


def test_a_result_over_the_budget_is_cut_and_saved_whole(make_source):
    source = make_source([entry(max_result_tokens=1000)])
    result = source.call_tool("mcp_policy_big", {"size": 300_000})
    assert estimate_tokens(result.text) <= 1000
    assert result.text.startswith(policy.LINE)
    assert "[result cut: 300,000 characters" in result.text
    spilled = result.details["spilled"]
    path = Path(spilled["path"])
    assert path.read_text(encoding="utf-8") == expected(300_000)
    assert path.stat().st_mode & 0o777 == 0o600
    assert result.content[0]["text"] == result.text  # hosts passing blocks get the cut text
    page = read_result(spilled["id"], spilled["shown"], 100)
    assert page.startswith(expected(300_000)[spilled["shown"] : spilled["shown"] + 100])
    assert f"next: offset={spilled['shown'] + 100}" in page
    tool = read_result_tool.call({"id": spilled["id"], "offset": 299_990})
    assert tool.text.endswith("end of result]") and not tool.is_error


def test_the_default_budget_is_25000_tokens(make_source, in_memory):
    source = make_source([entry()])
    assert "spilled" not in source.call_tool("mcp_policy_big", {"size": 99_000}).details
    cut = source.call_tool("mcp_policy_big", {"size": 101_000})
    assert cut.details["spilled"]["chars"] == 101_000
    assert estimate_tokens(cut.text) <= 25_000
    unlimited = make_source([entry(name="nolimit", max_result_tokens=0)])
    assert len(unlimited.call_tool("mcp_nolimit_big", {"size": 200_000}).text) == 200_000


def test_blobs_never_become_text_and_big_ones_go_to_files(make_source, in_memory):
    source = make_source([entry(max_result_tokens=1000)])
    result = source.call_tool("mcp_policy_blob", {"size": 60_000})
    assert len(result.text) < 1000 and "image/png" in result.text
    links = [b for b in result.content if b["type"] == "resource_link"]
    assert len(links) == 2
    assert {b["mime_type"] for b in links} == {"image/png", "application/zip"}
    for link in links:
        assert Path(link["uri"].removeprefix("file://")).stat().st_size == 60_000


def test_saved_results_are_swept_after_their_ttl(make_source, in_memory):
    source = make_source([entry(max_result_tokens=100)])
    first = Path(source.call_tool("mcp_policy_big", {"size": 5_000}).details["spilled"]["path"])
    old = time.time() - 2 * 24 * 3600
    os.utime(first, (old, old))
    second = Path(source.call_tool("mcp_policy_big", {"size": 5_000}).details["spilled"]["path"])
    assert not first.exists() and second.exists()
    assert sorted(p.name for p in results_dir().iterdir()) == [second.name]


def test_a_big_result_over_http_is_cut(make_source, serve):
    served = serve(policy.http_app())
    source = make_source([{"name": "policy", "url": served.url("/mcp"), "max_result_tokens": 500}])
    result = source.call_tool("mcp_policy_big", {"size": 50_000})
    assert estimate_tokens(result.text) <= 500
    assert Path(result.details["spilled"]["path"]).read_text(encoding="utf-8") == expected(50_000)
