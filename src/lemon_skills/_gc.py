"""Pause the cyclic garbage collector around bulk construction of acyclic records."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building thousands of acyclic records.

    Loading or serialising 10,000 skills otherwise triggers repeated full collections that cost
    more than the work itself; nothing built here forms reference cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
