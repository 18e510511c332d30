"""The one place YAML is parsed: PyYAML's safe loader, the C implementation when available."""

from __future__ import annotations

from typing import Any

import yaml

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

YAMLError = yaml.YAMLError


def safe_load(text: str) -> Any:
    """Parse one YAML document with the safe loader (no object construction)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - the loader is a SafeLoader


def safe_dump(data: Any) -> str:
    """Serialise ``data`` as block-style YAML, keys in insertion order."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
