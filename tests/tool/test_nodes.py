"""What the provider rewrites read from a schema: local ``$ref`` inlined (and refused when
recursive or external), the types a node allows, ``allOf`` merged, dropped constraints in
words, and a depth limit."""

from __future__ import annotations

import pytest

from lemon_skills.errors import SchemaConversionError
from lemon_skills.tool import nodes


def test_local_refs_are_inlined_and_definitions_dropped():
    schema = {
        "$defs": {"Id": {"type": "string", "description": "an id"}},
        "properties": {"id": {"$ref": "#/$defs/Id", "description": "whose id"}},
    }
    assert nodes.root(schema) == {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "whose id"}},
    }


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("#/$defs/Node", "recursive $ref '#/$defs/Node'"),
        ("other.json#/x", "external $ref 'other.json#/x'"),
        ("#/$defs/Missing", "unresolvable $ref '#/$defs/Missing'"),
    ],
)
def test_refs_that_cannot_be_inlined_say_why(ref, reason):
    schema = {
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "properties": {"n": {"$ref": ref}},
    }
    with pytest.raises(SchemaConversionError) as err:
        nodes.root(schema)
    assert str(err.value) == reason


def test_a_schema_that_is_not_an_object_is_refused():
    with pytest.raises(SchemaConversionError, match="not an object .'array'."):
        nodes.root({"type": "array"})


def test_types_are_read_or_inferred():
    assert nodes.types_of({"type": ["string", "null"]}) == ["string", "null"]
    assert nodes.types_of({"properties": {}}) == ["object"]
    assert nodes.types_of({"items": {}}) == ["array"]
    assert nodes.types_of({"enum": [1, "a"]}) == ["integer", "string"]
    assert nodes.types_of({"const": True}) == ["boolean"]
    assert nodes.types_of({}) == []
    assert nodes.free_form({"type": "object"}) and not nodes.free_form({"properties": {"a": {}}})


def test_all_of_parts_merge_unless_they_disagree():
    merged = nodes.merge_all_of(
        {"allOf": [{"properties": {"a": {}}, "required": ["a"]}, {"properties": {"b": {}}}]}, "x"
    )
    assert merged == {"properties": {"a": {}, "b": {}}, "required": ["a"]}
    with pytest.raises(SchemaConversionError, match="allOf at x cannot be merged"):
        nodes.merge_all_of({"type": "string", "allOf": [{"type": "integer"}]}, "x")


def test_dropped_constraints_are_kept_in_words_and_depth_is_limited():
    node = {"description": "Name", "minLength": 2, "default": "ab", "uniqueItems": False}
    assert nodes.words(node, frozenset()) == 'Name (default "ab"; at least 2 characters)'
    assert nodes.words({"maxLength": 3}, frozenset({"maxLength"})) == ""
    assert nodes.json_text({"description": "Extra"}) == {
        "type": "string",
        "description": "Extra (JSON object as text)",
    }
    nodes.check_depth(nodes.MAX_DEPTH, "a")
    with pytest.raises(SchemaConversionError, match="nested deeper than 10 levels at a.b"):
        nodes.check_depth(nodes.MAX_DEPTH + 1, "a.b")
