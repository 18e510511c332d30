"""The Gemini rewrite of a tool's input schema (pure): the OpenAPI subset a function
declaration takes, without ``$ref``, ``oneOf``, ``const`` or type lists (``nullable`` instead)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lemon_skills.errors import SchemaConversionError
from lemon_skills.tool.nodes import (
    check_depth,
    deeper,
    free_form,
    json_text,
    json_type,
    merge_all_of,
    meta,
    types_of,
    variants_of,
    words,
)

_GEMINI_KEYS = frozenset(
    "type format description nullable enum properties required items minItems maxItems minimum "  # noqa: SIM905
    "maximum anyOf minLength maxLength pattern minProperties maxProperties".split()
)
_GEMINI_FORMATS = {"string": {"date-time", "enum"}, "integer": {"int32", "int64"}}
_GEMINI_FORMATS["number"] = {"float", "double"}


class GeminiRewrite:
    """Rewrites one node (and its children) for Gemini."""

    def node(self, node: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        check_depth(depth, path or "the root")
        node = merge_all_of(dict(node), path)
        variants = variants_of(node)
        if variants is not None:
            subs = [dict(v) for v in variants if isinstance(v, dict)]
            nulls = [v for v in subs if v.get("type") == "null"]
            rest = [v for v in subs if v.get("type") != "null"]
            if len(rest) == 1:
                out = self.node({**rest[0], **meta(node)}, path, depth)
            else:
                out = {"anyOf": [self.node(v, path, depth + 1) for v in rest]}
                out = self._described(out, node, None)
            if nulls:
                out["nullable"] = True
            return out
        types = types_of(node)
        if "const" in node:
            c = node["const"]
            node = {k: v for k, v in node.items() if k != "const"}
            if isinstance(c, str):
                node["enum"] = [c]
            types = types or [json_type(c)]
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
        if free_form(node) and depth > 0:
            return json_text(node)
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
                k: self.node(dict(v) if isinstance(v, dict) else {}, deeper(path, k), depth + 1)
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
            out["items"] = self.node(sub, deeper(path, "[]"), depth + 1)
        return self._described(out, node, fmt)

    @staticmethod
    def _described(out: dict[str, Any], node: Mapping[str, Any], fmt: Any) -> dict[str, Any]:
        keep = _GEMINI_KEYS if "format" in out or fmt is None else _GEMINI_KEYS - {"format"}
        text = words(node, keep)
        if text:
            out["description"] = text
        else:
            out.pop("description", None)
        return out
