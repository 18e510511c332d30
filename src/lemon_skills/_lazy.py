"""Package attributes imported on first use, so importing a package costs nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_getattr(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``.

    ``table`` maps a name to ``"module"`` (the attribute of that name in it), ``"module:attr"``
    or ``"module:"`` (the module itself); a module starting with ``.`` is relative to
    ``package``. The value is imported on first use and kept in ``namespace``.
    """

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, colon, attr = target.partition(":")
        module = importlib.import_module(module_name, package)
        value = module if colon and not attr else getattr(module, attr or name)
        namespace[name] = value
        return value

    return __getattr__
