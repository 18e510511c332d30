"""Tool input schemas rewritten into what each model provider accepts (pure).

MCP servers publish full JSON Schema; providers accept subsets. OpenAI's strict mode wants
every property required (optional ones nullable), ``additionalProperties: false`` on every
object and none of a list of keywords; Gemini's function declarations take an OpenAPI subset
with no ``$ref``, ``oneOf``, ``const`` or type lists. The rewrite keeps every argument the
original accepts acceptable (it may loosen a constraint the provider cannot express, and says
so in the description); a schema it cannot rewrite raises ``SchemaConversionError`` with the
reason, so the caller can leave that one tool out.

Two rewrites change the shape of the arguments a model sends back, and ``restore_args`` undoes
them against the original schema: an optional property sent as ``null`` is dropped, and a
free-form object (no ``properties``), which neither provider can express, travels as JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import jsonschema

from lemon_skills.errors import SchemaConversionError
from lemon_skills.tool.gemini import GeminiRewrite
from lemon_skills.tool.nodes import MAX_DEPTH, free_form, root, variants_of
from lemon_skills.tool.strict import StrictRewrite

Provider = Literal["openai", "anthropic", "gemini"]

__all__ = [
    "MAX_DEPTH",
    "Provider",
    "convert",
    "restore_args",
    "to_anthropic",
    "to_gemini",
    "to_openai_strict",
]


def to_openai_strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` for OpenAI ``strict: true`` function calling.

    Raises:
        SchemaConversionError: the schema accepts any value somewhere, is recursive, or nests
            deeper than ``MAX_DEPTH``.
    """
    return StrictRewrite().node(root(schema), "", 0)


def to_gemini(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as a Gemini function declaration's ``parameters`` (OpenAPI subset).

    Raises:
        SchemaConversionError: recursive ``$ref``, an ``allOf`` that cannot be merged, or
            nesting deeper than ``MAX_DEPTH``.
    """
    return GeminiRewrite().node(root(schema), "", 0)


def to_anthropic(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` for the Anthropic Messages API (full JSON Schema; only the root is fixed up)."""
    out = dict(schema)
    out["type"] = "object"
    out.setdefault("properties", {})
    return out


def convert(
    schema: Mapping[str, Any], provider: Provider, *, strict: bool = True
) -> dict[str, Any]:
    """``schema`` for ``provider``; ``strict`` applies to OpenAI only."""
    if provider == "gemini":
        return to_gemini(schema)
    if provider == "openai" and strict:
        return to_openai_strict(schema)
    return to_anthropic(schema)


def restore_args(schema: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments shaped by a converted schema, reshaped for the original ``schema``.

    Drops ``null`` values the original does not accept and decodes free-form objects sent as
    JSON text; anything else is left as is (validation against the original has the last word).
    """
    try:
        top = root(schema)
    except SchemaConversionError:
        return dict(args)  # never converted, so nothing to undo
    value = _restore(top, dict(args))
    return value if isinstance(value, dict) else dict(args)


# -- restoring arguments -------------------------------------------------------------------


def _restore(node: Mapping[str, Any], value: Any) -> Any:
    if isinstance(value, str) and _sent_as_text(node):
        try:
            return json.loads(value)
        except ValueError:
            return value
    variants = variants_of(node)
    if variants and isinstance(value, dict | list):
        return _restore_variant(variants, value)
    if isinstance(value, dict) and isinstance(node.get("properties"), dict):
        props: Mapping[str, Any] = node["properties"]
        required = set(node.get("required") or ())
        out = {}
        for k, v in value.items():
            sub = props.get(k)
            sub = sub if isinstance(sub, Mapping) else {}
            if v is None and k not in required:
                continue  # strict mode's way of leaving an optional argument out
            out[k] = _restore(sub, v) if sub else v
        return out
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [_restore(node["items"], v) for v in value]
    return value


def _restore_variant(variants: list[Any], value: Any) -> Any:
    """The value restored for the first variant it then satisfies."""
    first = None
    for variant in variants:
        if not isinstance(variant, Mapping):
            continue
        restored = _restore(variant, value)
        first = restored if first is None else first
        if jsonschema.validators.validator_for(variant)(variant).is_valid(restored):
            return restored
    return value if first is None else first


def _sent_as_text(node: Mapping[str, Any]) -> bool:
    if free_form(node):
        return True
    return any(isinstance(v, Mapping) and free_form(v) for v in variants_of(node) or ())
