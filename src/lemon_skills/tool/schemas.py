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
from typing import Any, Literal, cast

import jsonschema

from lemon_skills.errors import SchemaConversionError

Provider = Literal["openai", "anthropic", "gemini"]

#: OpenAI strict mode refuses deeper schemas.
MAX_DEPTH = 10

_STRICT_KEYS = frozenset(
    "type properties required additionalProperties items enum anyOf description pattern format "  # noqa: SIM905
    "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems".split()
)
_STRICT_FORMATS = frozenset(
    ("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
)  # noqa: SIM905
_GEMINI_KEYS = frozenset(
    "type format description nullable enum properties required items minItems maxItems minimum "  # noqa: SIM905
    "maximum anyOf minLength maxLength pattern minProperties maxProperties".split()
)
_GEMINI_FORMATS = {"string": {"date-time", "enum"}, "integer": {"int32", "int64"}}
_GEMINI_FORMATS["number"] = {"float", "double"}
#: Constraints a provider cannot check, kept for the model as words in the description.
_WORDED = {
    "default": "default {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "uniqueItems": "items unique",
    "format": "format {}",
}
_JSON_TEXT = "JSON object as text"


def to_openai_strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` for OpenAI ``strict: true`` function calling.

    Raises:
        SchemaConversionError: the schema accepts any value somewhere, is recursive, or nests
            deeper than ``MAX_DEPTH``.
    """
    root = _root(schema)
    return _Strict().node(root, "", 0)


def to_gemini(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as a Gemini function declaration's ``parameters`` (OpenAPI subset).

    Raises:
        SchemaConversionError: recursive ``$ref``, an ``allOf`` that cannot be merged, or
            nesting deeper than ``MAX_DEPTH``.
    """
    root = _root(schema)
    return _Gemini().node(root, "", 0)


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
        root = _root(schema)
    except SchemaConversionError:
        return dict(args)  # never converted, so nothing to undo
    value = _restore(root, dict(args))
    return value if isinstance(value, dict) else dict(args)


# -- shared --------------------------------------------------------------------------------


def _root(schema: Mapping[str, Any]) -> dict[str, Any]:
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


def _free_form(node: Mapping[str, Any]) -> bool:
    """An object whose keys are not listed: neither provider can describe it."""
    return _types(node) == ["object"] and not node.get("properties")


def _types(node: Mapping[str, Any]) -> list[str]:
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
        kinds = {_json_type(v) for v in node["enum"]}
        return sorted(kinds)
    if "const" in node:
        return [_json_type(node["const"])]
    return []


def _json_type(value: Any) -> str:
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


def _variants(node: Mapping[str, Any]) -> list[Any] | None:
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return list(node[key])
    return None


def _merge_all_of(node: dict[str, Any], path: str) -> dict[str, Any]:
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


def _words(node: Mapping[str, Any], keep: frozenset[str]) -> str:
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


def _deeper(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_depth(depth: int, path: str) -> None:
    if depth > MAX_DEPTH:
        raise SchemaConversionError(f"nested deeper than {MAX_DEPTH} levels at {path}")


# -- OpenAI strict -------------------------------------------------------------------------


class _Strict:
    def node(self, node: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        _check_depth(depth, path or "the root")
        node = _merge_all_of(dict(node), path)
        variants = _variants(node)
        if variants is not None:
            out: dict[str, Any] = {
                "anyOf": [
                    self.node(dict(v), path, depth + 1) for v in variants if isinstance(v, dict)
                ]
            }
            return self._described(out, node)
        if "const" in node:
            return self._described(
                {"type": _json_type(node["const"]), "enum": [node["const"]]}, node
            )
        types = _types(node)
        if not types:
            raise SchemaConversionError(f"{path or 'the root'} accepts any JSON value")
        if _free_form(node) and depth > 0:
            return self._json_text(node)
        if len([t for t in types if t != "null"]) > 1:
            subs = [self.node({**node, "type": t}, path, depth) for t in types]
            return self._described({"anyOf": subs}, node)
        if types == ["null"]:
            return self._described({"type": "null"}, node)
        kind = next(t for t in types if t != "null")
        out = {k: v for k, v in node.items() if k in _STRICT_KEYS and k not in ("type",)}
        out["type"] = types if len(types) > 1 else kind
        if "format" in out and out["format"] not in _STRICT_FORMATS:
            del out["format"]
        if kind == "object":
            self._object(out, node, path, depth)
        elif kind == "array":
            items = node.get("items")
            if isinstance(items, dict) and items:
                out["items"] = self.node(items, _deeper(path, "[]"), depth + 1)
            else:
                raise SchemaConversionError(f"{_deeper(path, '[]')} accepts any JSON value")
        return self._described(out, node)

    def _object(self, out: dict[str, Any], node: dict[str, Any], path: str, depth: int) -> None:
        props = node.get("properties") or {}
        required = set(node.get("required") or ())
        out["properties"] = {}
        for key, sub in props.items():
            conv = self.node(
                dict(sub) if isinstance(sub, dict) else {}, _deeper(path, key), depth + 1
            )
            out["properties"][key] = conv if key in required else _nullable(conv)
        out["required"] = list(props)
        out["additionalProperties"] = False

    @staticmethod
    def _json_text(node: Mapping[str, Any]) -> dict[str, Any]:
        text = str(node.get("description") or "")
        return {"type": "string", "description": f"{text} ({_JSON_TEXT})" if text else _JSON_TEXT}

    @staticmethod
    def _described(out: dict[str, Any], node: Mapping[str, Any]) -> dict[str, Any]:
        text = _words(node, _STRICT_KEYS - {"format"} if "format" not in out else _STRICT_KEYS)
        if text:
            out["description"] = text
        else:
            out.pop("description", None)
        return out


def _nullable(conv: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in conv:
        if {"type": "null"} not in conv["anyOf"]:
            conv["anyOf"] = [*conv["anyOf"], {"type": "null"}]
        return conv
    t = conv.get("type")
    if isinstance(t, str) and t != "null":
        conv["type"] = [t, "null"]
    elif isinstance(t, list) and "null" not in t:
        conv["type"] = [*t, "null"]
    if "enum" in conv and None not in conv["enum"]:
        conv["enum"] = [*conv["enum"], None]
    return conv


# -- Gemini --------------------------------------------------------------------------------


class _Gemini:
    def node(self, node: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        _check_depth(depth, path or "the root")
        node = _merge_all_of(dict(node), path)
        variants = _variants(node)
        if variants is not None:
            subs = [dict(v) for v in variants if isinstance(v, dict)]
            nulls = [v for v in subs if v.get("type") == "null"]
            rest = [v for v in subs if v.get("type") != "null"]
            if len(rest) == 1:
                out = self.node({**rest[0], **_meta(node)}, path, depth)
            else:
                out = {"anyOf": [self.node(v, path, depth + 1) for v in rest]}
                out = self._described(out, node, None)
            if nulls:
                out["nullable"] = True
            return out
        types = _types(node)
        if "const" in node:
            c = node["const"]
            node = {k: v for k, v in node.items() if k != "const"}
            if isinstance(c, str):
                node["enum"] = [c]
            types = types or [_json_type(c)]
        if not types:
            raise SchemaConversionError(f"{path or 'the root'} accepts any JSON value")
        nullable = "null" in types
        kinds = [t for t in types if t != "null"]
        if len(kinds) > 1:
            out = {"anyOf": [self.node({**node, "type": t}, path, depth + 1) for t in kinds]}
            out = self._described(out, node, None)
        else:
            out = self._single(node, kinds[0] if kinds else "string", path, depth)
        if nullable:
            out["nullable"] = True
        return out

    def _single(self, node: dict[str, Any], kind: str, path: str, depth: int) -> dict[str, Any]:
        if _free_form(node) and depth > 0:
            return _Strict._json_text(node)
        out = {k: v for k, v in node.items() if k in _GEMINI_KEYS and k != "type"}
        out["type"] = kind
        if "exclusiveMinimum" in node and isinstance(node["exclusiveMinimum"], int | float):
            out.setdefault("minimum", node["exclusiveMinimum"])
        if "exclusiveMaximum" in node and isinstance(node["exclusiveMaximum"], int | float):
            out.setdefault("maximum", node["exclusiveMaximum"])
        fmt = out.get("format")
        if fmt is not None and fmt not in _GEMINI_FORMATS.get(kind, set()):
            del out["format"]
        if "enum" in out:
            values = out["enum"]
            if kind == "string" and all(isinstance(v, str) for v in values):
                out["format"] = "enum"
            else:
                del out["enum"]
        if kind == "object":
            props = node.get("properties") or {}
            out["properties"] = {
                k: self.node(dict(v) if isinstance(v, dict) else {}, _deeper(path, k), depth + 1)
                for k, v in props.items()
            }
            req = [r for r in node.get("required") or () if r in props]
            if req:
                out["required"] = req
            else:
                out.pop("required", None)
        elif kind == "array":
            items = node.get("items")
            sub = dict(items) if isinstance(items, dict) else {}
            out["items"] = self.node(sub, _deeper(path, "[]"), depth + 1)
        return self._described(out, node, fmt)

    @staticmethod
    def _described(out: dict[str, Any], node: Mapping[str, Any], fmt: Any) -> dict[str, Any]:
        keep = _GEMINI_KEYS if "format" in out or fmt is None else _GEMINI_KEYS - {"format"}
        text = _words(node, keep)
        if text:
            out["description"] = text
        else:
            out.pop("description", None)
        return out


def _meta(node: Mapping[str, Any]) -> dict[str, Any]:
    return {k: node[k] for k in ("description", "default") if k in node}


# -- restoring arguments -------------------------------------------------------------------


def _restore(node: Mapping[str, Any], value: Any) -> Any:
    if isinstance(value, str) and _sent_as_text(node):
        try:
            return json.loads(value)
        except ValueError:
            return value
    variants = _variants(node)
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
    if _free_form(node):
        return True
    return any(isinstance(v, Mapping) and _free_form(v) for v in _variants(node) or ())
