"""The Gemini rewrite: the OpenAPI subset without ``$ref``, ``oneOf``, ``const`` or type
lists, ``nullable`` for null, and only the formats Gemini knows."""

from __future__ import annotations

import json

from lemon_skills.tool import schemas


def test_gemini_gets_no_refs_oneof_const_or_type_lists():
    schema = {
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {
            "at": {"$ref": "#/$defs/Point"},
            "kind": {"const": "circle"},
            "size": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "note": {"type": ["string", "null"]},
        },
    }
    text = json.dumps(schemas.to_gemini(schema))
    for word in ("$ref", "$defs", "oneOf", "const", '["string", "null"]'):
        assert word not in text
    out = schemas.to_gemini(schema)
    assert out["properties"]["at"]["properties"]["x"]["type"] == "number"
    assert out["properties"]["kind"]["enum"] == ["circle"]
    assert out["properties"]["note"] == {"type": "string", "nullable": True}


def test_formats_gemini_does_not_know_go_into_the_description_and_exclusive_bounds_stay():
    out = schemas.to_gemini(
        {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "site": {"type": "string", "format": "uri"},
                "n": {"type": "number", "exclusiveMinimum": 0},
            },
        }
    )
    props = out["properties"]
    assert props["when"] == {"type": "string", "format": "date-time"}
    assert props["site"] == {"type": "string", "description": "format uri"}
    assert props["n"]["minimum"] == 0
