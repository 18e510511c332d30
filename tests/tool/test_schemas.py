"""Provider schema rewrites over real servers' tool lists: every schema converts for OpenAI
strict mode and Gemini (or is left out with a reason), the result is valid JSON Schema, and it
accepts the same example arguments as the original, which ``restore_args`` turns back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from benchmarks.corpus import bench_root

from lemon_skills.errors import SchemaConversionError
from lemon_skills.tool import Tool, ToolResult, export_tools, schemas
from tests.helpers.schema_examples import NoExample, example, shape

DATA = Path(__file__).parent.parent / "data" / "server_tools.jsonl"
FIVE = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def _tool_corpus() -> Path | None:
    """1,073 real tool lists (one tool per line with "inputSchema"): ``$LEMON_TOOL_CORPUS``, else
    the bench's ``tools/tools.jsonl`` when the bench sits above the checkout (it does in CI)."""
    env = os.environ.get("LEMON_TOOL_CORPUS")
    if env:
        return Path(env)
    try:
        return bench_root() / "tools" / "tools.jsonl"
    except SystemExit:
        return None


CORPUS = _tool_corpus()


def check_conversions(records: list[dict[str, Any]]) -> int:
    checked = 0
    for rec in records:
        original = rec["inputSchema"]
        for provider in ("openai", "gemini"):
            try:
                converted = schemas.convert(original, provider)  # type: ignore[arg-type]
            except SchemaConversionError as exc:
                assert str(exc), rec["name"]
                continue
            jsonschema.Draft202012Validator.check_schema(converted)
            for optional in (False, True):
                try:
                    args = example(original, original, optional=optional)
                    jsonschema.validate(args, original)
                except (NoExample, jsonschema.ValidationError):
                    continue
                sent = shape(args, converted)
                jsonschema.validate(sent, converted)
                assert schemas.restore_args(original, sent) == args, (rec["name"], provider)
                checked += 1
    return checked


def test_the_five_reference_servers_convert_and_keep_their_arguments():
    assert {r["server"] for r in FIVE} == {"everything", "filesystem", "git", "time", "fetch"}
    assert check_conversions(FIVE) >= 4 * len(FIVE) - 4


@pytest.mark.slow
@pytest.mark.skipif(CORPUS is None, reason="no tool corpus: set LEMON_TOOL_CORPUS to a tools.jsonl")
def test_a_larger_corpus_converts_or_says_why():
    assert CORPUS is not None
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    assert check_conversions([json.loads(line) for line in lines]) > 0


def test_a_free_form_object_travels_as_json_text_and_comes_back():
    schema = {
        "type": "object",
        "properties": {"headers": {"type": "object", "description": "HTTP headers"}},
    }
    strict = schemas.to_openai_strict(schema)
    assert strict["properties"]["headers"]["type"] == ["string", "null"]
    tool = Tool(
        name="t", description="", parameters=schema, handler=lambda p, c: ToolResult(json.dumps(p))
    )
    assert json.loads(tool.call({"headers": '{"a": "1"}'}).text) == {"headers": {"a": "1"}}
    assert json.loads(tool.call({"headers": None}).text) == {}


def test_an_unconvertible_tool_is_left_out_with_its_reason_not_the_whole_list():
    good = Tool(
        name="good",
        description="",
        parameters={"type": "object"},
        handler=lambda p, c: ToolResult(""),
    )
    recursive = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    bad = Tool(
        name="bad", description="", parameters=recursive, handler=lambda p, c: ToolResult("")
    )
    for fmt in ("openai-strict", "gemini"):
        defs, excluded = export_tools([good, bad], fmt)  # type: ignore[arg-type]
        assert len(defs) == 1
        assert [(e.name, e.reason) for e in excluded] == [("bad", "recursive $ref '#/$defs/Node'")]
    with pytest.raises(SchemaConversionError, match="any JSON value"):
        schemas.to_openai_strict({"type": "object", "properties": {"v": {}}})
    assert bad.to_openai()["function"]["parameters"] == recursive  # plain export keeps it


def test_restoring_arguments_of_a_schema_that_cannot_be_converted_changes_nothing():
    schema = {"type": "object", "properties": {"r": {"$ref": "https://example.invalid/x.json"}}}
    assert schemas.restore_args(schema, {"r": None}) == {"r": None}
