"""Example arguments for a JSON Schema: every required value, then every optional one too.

Good enough to check that a rewritten schema accepts what the original accepts; a value that
cannot be made (a pattern no candidate matches) is left out of the example.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_STRINGS = ("a", "2024-01-01T00:00:00Z", "2024-01-01", "x@example.com", "1", "abc-1", "/tmp/a")
_STRINGS += ("https://example.com/", "00000000-0000-0000-0000-000000000000", "12:00:00")


class NoExample(Exception):
    pass


def example(node: Any, root: Mapping[str, Any], *, optional: bool) -> Any:
    return _example(node, root, optional=optional, root_level=True)


def _example(
    node: Any, root: Mapping[str, Any], *, optional: bool, root_level: bool = False
) -> Any:
    example = _example
    if not isinstance(node, Mapping):
        return "a"
    if "$ref" in node:
        target: Any = root
        for part in str(node["$ref"]).lstrip("#").split("/"):
            if part:
                target = target[part]
        return example(
            {**target, **{k: v for k, v in node.items() if k != "$ref"}}, root, optional=optional
        )
    for key in ("const",):
        if key in node:
            return node[key]
    if node.get("enum"):
        return node["enum"][0]
    if "default" in node and node["default"] is not None:
        return node["default"]
    if isinstance(node.get("examples"), list) and node["examples"]:
        return node["examples"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            for variant in node[key]:
                if isinstance(variant, Mapping) and variant.get("type") != "null":
                    try:
                        return example(variant, root, optional=optional)
                    except NoExample:
                        continue
            raise NoExample(key)
    if isinstance(node.get("allOf"), list):
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            merged = {
                **merged,
                **part,
                "properties": {**merged.get("properties", {}), **part.get("properties", {})},
            }
            merged["required"] = [*merged.get("required", []), *part.get("required", [])]
        return example(
            {**{k: v for k, v in node.items() if k != "allOf"}, **merged}, root, optional=optional
        )
    t = node.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t is None:
        t = "object" if "properties" in node else "array" if "items" in node else "string"
    if t == "object":
        props = node.get("properties") or {}
        required = set(node.get("required") or ())
        out = {}
        for k, sub in props.items():
            if k in required or optional:
                try:
                    out[k] = example(sub, root, optional=optional)
                except NoExample:
                    if k in required:
                        raise
        if not props and not root_level:
            out = {"k": "v"} if node.get("additionalProperties", True) is not False else {}
        return out
    if t == "array":
        n = max(1, int(node.get("minItems", 1)))
        items = node.get("items") if isinstance(node.get("items"), Mapping) else {"type": "string"}
        value = example(items, root, optional=optional)
        return [value] * (1 if node.get("uniqueItems") else n)
    if t in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", 0))
        value = int(low) + (1 if "exclusiveMinimum" in node else 0)
        high = node.get("maximum")
        if high is not None and value > high:
            value = int(high)
        return value if t == "integer" else float(value)
    if t == "boolean":
        return True
    if t == "null":
        return None
    pattern = node.get("pattern")
    low = int(node.get("minLength", 1))
    for candidate in _STRINGS:
        text = candidate * max(1, -(-low // len(candidate)))
        if "maxLength" in node:
            text = text[: node["maxLength"]]
        if pattern is None or re.search(pattern, text):
            return text
    raise NoExample(pattern)


def shape(value: Any, node: Any) -> Any:
    """``value`` (valid for the original schema) as a model would send it for the converted
    ``node``: free-form objects as JSON text, absent optional properties as null."""
    import json

    import jsonschema

    if not isinstance(node, Mapping):
        return value
    if isinstance(node.get("anyOf"), list):
        for variant in node["anyOf"]:
            shaped = shape(value, variant)
            if jsonschema.Draft202012Validator(variant).is_valid(shaped):
                return shaped
        return value
    kind = node.get("type")
    if (kind == "string" or (isinstance(kind, list) and "string" in kind)) and isinstance(
        value, dict
    ):
        return json.dumps(value)
    if isinstance(value, dict) and isinstance(node.get("properties"), Mapping):
        out = {k: shape(v, node["properties"].get(k)) for k, v in value.items()}
        for k in node.get("required") or ():
            out.setdefault(k, None)
        return out
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [shape(v, node["items"]) for v in value]
    return value
