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

    On the way out what was built is moved to the oldest generation: left in the youngest,
    the first collection after the pause would walk every record once more (about 13 ms for
    an index of 10,000 skills) to learn that none of them is garbage. Objects the process
    froze itself (``gc.freeze``) stay frozen: then the records are left where they are.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()  # the young generations into the permanent one...
            gc.unfreeze()  # ...and that into the oldest: a list splice, no traversal
        if was_enabled:
            gc.enable()
