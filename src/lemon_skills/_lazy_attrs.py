"""Package attributes imported on first use, so importing a package costs nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_getattr(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps a name to ``".module"`` or
    ``".module:attribute"``; the value is imported on first use and kept in ``namespace``."""

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(module, package), attr or name)
        namespace[name] = value
        return value

    return __getattr__
