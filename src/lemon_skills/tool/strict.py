"""The OpenAI strict-mode rewrite of a tool's input schema (pure): every property required
(optional ones nullable), ``additionalProperties: false`` on every object, only the keywords
strict mode accepts."""

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
    types_of,
    variants_of,
    words,
)

STRICT_KEYS = frozenset(
    "type properties required additionalProperties items enum anyOf description pattern format "  # noqa: SIM905
    "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems".split()
)
_STRICT_FORMATS = frozenset(
    ("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
)  # noqa: SIM905


class StrictRewrite:
    """Rewrites one node (and its children) for strict mode."""

    def node(self, node: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        check_depth(depth, path or "the root")
        node = merge_all_of(dict(node), path)
        variants = variants_of(node)
        if variants is not None:
            out: dict[str, Any] = {
                "anyOf": [
                    self.node(dict(v), path, depth + 1) for v in variants if isinstance(v, dict)
                ]
            }
            return self._described(out, node)
        if "const" in node:
            return self._described(
                {"type": json_type(node["const"]), "enum": [node["const"]]}, node
            )
        types = types_of(node)
        if not types:
            raise SchemaConversionError(f"{path or 'the root'} accepts any JSON value")
        if free_form(node) and depth > 0:
            return json_text(node)
        if len([t for t in types if t != "null"]) > 1:
            subs = [self.node({**node, "type": t}, path, depth) for t in types]
            return self._described({"anyOf": subs}, node)
        if types == ["null"]:
            return self._described({"type": "null"}, node)
        kind = next(t for t in types if t != "null")
        out = {k: v for k, v in node.items() if k in STRICT_KEYS and k not in ("type",)}
        out["type"] = types if len(types) > 1 else kind
        if "format" in out and out["format"] not in _STRICT_FORMATS:
            del out["format"]
        if kind == "object":
            self._object(out, node, path, depth)
        elif kind == "array":
            items = node.get("items")
            if isinstance(items, dict) and items:
                out["items"] = self.node(items, deeper(path, "[]"), depth + 1)
            else:
                raise SchemaConversionError(f"{deeper(path, '[]')} accepts any JSON value")
        return self._described(out, node)

    def _object(self, out: dict[str, Any], node: dict[str, Any], path: str, depth: int) -> None:
        props = node.get("properties") or {}
        required = set(node.get("required") or ())
        out["properties"] = {}
        for key, sub in props.items():
            conv = self.node(
                dict(sub) if isinstance(sub, dict) else {}, deeper(path, key), depth + 1
            )
            out["properties"][key] = conv if key in required else _nullable(conv)
        out["required"] = list(props)
        out["additionalProperties"] = False

    @staticmethod
    def _described(out: dict[str, Any], node: Mapping[str, Any]) -> dict[str, Any]:
        text = words(node, STRICT_KEYS - {"format"} if "format" not in out else STRICT_KEYS)
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
