"""JSON Schema nodes as the provider rewrites see them (pure): the root with every local
``$ref`` inlined, a node's types and variants, ``allOf`` merged, the constraints a provider drops
put into words, and the JSON-text form of a free-form object."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from lemon_skills.errors import SchemaConversionError

#: OpenAI strict mode refuses deeper schemas.
MAX_DEPTH = 10

#: Constraints a provider cannot check, kept for the model as words in the description.
_WORDED = {
    "default": "default {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "uniqueItems": "items unique",
    "format": "format {}",
}
JSON_TEXT = "JSON object as text"


def root(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as an object schema with its local ``$ref`` inlined.

    Raises:
        SchemaConversionError: the schema is not an object, or a ``$ref`` is recursive,
            external or unresolvable.
    """
    out = _inline_refs(dict(schema), dict(schema), ())
    if out.get("type") in (None, ["object"]) and "anyOf" not in out and "oneOf" not in out:
        out["type"] = "object"
    if out.get("type") != "object":
        raise SchemaConversionError(f"the input schema is not an object ({out.get('type')!r})")
    out.setdefault("properties", {})
    return cast(dict[str, Any], out)


def _inline_refs(node: Any, root: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline_refs(v, root, seen) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            raise SchemaConversionError(f"recursive $ref {ref!r}")
        target = _lookup(root, ref)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline_refs(merged, root, (*seen, ref))
    return {
        k: _inline_refs(v, root, seen) for k, v in node.items() if k not in ("$defs", "definitions")
    }


def _lookup(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise SchemaConversionError(f"external $ref {ref!r}")
    node: Any = root
    for part in ref[1:].split("/"):
        if part:
            node = node.get(part.replace("~1", "/").replace("~0", "~"), None)
            if not isinstance(node, dict):
                raise SchemaConversionError(f"unresolvable $ref {ref!r}")
    return dict(node)


def free_form(node: Mapping[str, Any]) -> bool:
    """An object whose keys are not listed: neither provider can describe it."""
    return types_of(node) == ["object"] and not node.get("properties")


def types_of(node: Mapping[str, Any]) -> list[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    if "properties" in node:
        return ["object"]
    if "items" in node:
        return ["array"]
    if "enum" in node and node["enum"]:
        kinds = {json_type(v) for v in node["enum"]}
        return sorted(kinds)
    if "const" in node:
        return [json_type(node["const"])]
    return []


def json_type(value: Any) -> str:
    """The JSON types ``node`` allows, inferred when it names none."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def variants_of(node: Mapping[str, Any]) -> list[Any] | None:
    """The JSON type of a Python value."""
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return list(node[key])
    return None


def merge_all_of(node: dict[str, Any], path: str) -> dict[str, Any]:
    """The ``anyOf`` / ``oneOf`` list of ``node``, if it has one."""
    parts = node.pop("allOf", None)
    if not isinstance(parts, list):
        return node
    out = dict(node)
    for part in parts:
        if not isinstance(part, dict):
            raise SchemaConversionError(f"allOf at {path or 'the root'} cannot be merged")
        for k, v in part.items():
            if k == "properties":
                out["properties"] = {**out.get("properties", {}), **v}
            elif k == "required":
                out["required"] = sorted({*out.get("required", []), *v})
            elif k in out and out[k] != v and k != "description":
                raise SchemaConversionError(f"allOf at {path or 'the root'} cannot be merged")
            else:
                out.setdefault(k, v)
    return out


def words(node: Mapping[str, Any], keep: frozenset[str]) -> str:
    """``node`` with its ``allOf`` parts merged in.

    Raises:
        SchemaConversionError: two parts disagree on a keyword.
    """
    """The description plus the constraints the provider drops, in words."""
    notes = [
        _WORDED[k].format(json.dumps(node[k]) if k == "default" else node[k])
        for k in _WORDED
        if k in node and k not in keep and not (k == "uniqueItems" and not node[k])
    ]
    text = str(node.get("description") or "")
    if not notes:
        return text
    return f"{text} ({'; '.join(notes)})" if text else "; ".join(notes)


def deeper(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check_depth(depth: int, path: str) -> None:
    """The path of a child of ``path``."""
    if depth > MAX_DEPTH:
        raise SchemaConversionError(f"nested deeper than {MAX_DEPTH} levels at {path}")


def meta(node: Mapping[str, Any]) -> dict[str, Any]:
    """Refuse nesting deeper than ``MAX_DEPTH``.

    Raises:
        SchemaConversionError: too deep.
    """
    """The description and default of ``node`` (kept when a union collapses to one type)."""
    return {k: node[k] for k in ("description", "default") if k in node}


def json_text(node: Mapping[str, Any]) -> dict[str, Any]:
    """A free-form object as the string the model sends it in (decoded by ``restore_args``)."""
    text = str(node.get("description") or "")
    return {"type": "string", "description": f"{text} ({JSON_TEXT})" if text else JSON_TEXT}
