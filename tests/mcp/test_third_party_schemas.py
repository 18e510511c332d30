"""The live tool lists of third-party servers convert for OpenAI strict mode and Gemini (or
say why not) and keep accepting their example arguments; the same check runs without the
servers over their recorded lists in tests/data/server_tools.jsonl (tests/tool/test_schemas.py).
Run with ``pytest -m integration`` (see test_third_party.py for installing the servers)."""

from __future__ import annotations

import pytest

from tests.mcp.test_third_party import everything_js, time_server
from tests.tool.test_schemas import check_conversions

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("which", ["everything", "time"])
def test_live_tool_schemas_convert(make_source, which):
    if which == "everything":
        entry = {"name": "everything", "command": "node", "args": [everything_js(), "stdio"]}
    else:
        entry = {"name": "time", "command": time_server()}
    source = make_source([entry], include_config=False)
    records = [
        {"name": s.target, "inputSchema": dict(s.input_schema)}
        for s in source.tool_specs()
        if s.kind == "tool"
    ]
    assert records
    assert check_conversions(records) >= len(records)
