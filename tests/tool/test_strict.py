"""The OpenAI strict-mode rewrite: every property required, optional ones nullable, no extra
keys, and the constraints strict mode drops kept in words."""

from __future__ import annotations

import pytest

from lemon_skills.errors import SchemaConversionError
from lemon_skills.tool import schemas


def test_strict_mode_makes_every_property_required_and_optional_ones_nullable():
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "format": "uri", "minLength": 1},
            "depth": {"type": "integer", "default": 2},
            "mode": {"enum": ["a", "b"]},
        },
        "required": ["path"],
    }
    out = schemas.to_openai_strict(schema)
    assert out["required"] == ["path", "depth", "mode"]
    assert out["additionalProperties"] is False
    assert out["properties"]["depth"]["type"] == ["integer", "null"]
    assert out["properties"]["mode"]["enum"] == ["a", "b", None]
    assert "format" not in out["properties"]["path"]
    assert "format uri" in out["properties"]["path"]["description"]
    assert "default 2" in out["properties"]["depth"]["description"]


def test_a_node_that_accepts_anything_cannot_be_strict():
    with pytest.raises(SchemaConversionError, match="^blob accepts any JSON value"):
        schemas.to_openai_strict({"type": "object", "properties": {"blob": {}}})
    with pytest.raises(SchemaConversionError, match=r"tags\.\[\] accepts any JSON value"):
        schemas.to_openai_strict({"type": "object", "properties": {"tags": {"type": "array"}}})


def test_type_lists_become_unions_and_const_an_enum():
    out = schemas.to_openai_strict(
        {
            "type": "object",
            "properties": {"v": {"type": ["string", "integer"]}, "k": {"const": 3}},
            "required": ["v", "k"],
        }
    )
    assert out["properties"]["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert out["properties"]["k"] == {"type": "integer", "enum": [3]}
