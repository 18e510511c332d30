from __future__ import annotations

import gc

import pytest

from lemon_skills._gc import gc_paused


def test_gc_is_paused_inside_and_restored_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_is_restored_when_the_block_raises():
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()


def test_gc_left_disabled_when_the_caller_had_disabled_it():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Record:
    """Tracked by the collector, like the records a bulk load builds."""


def test_what_the_pause_built_leaves_it_in_the_oldest_generation():
    # Left in the youngest, the next young collection would walk all of it once more.
    with gc_paused():
        records = [_Record() for _ in range(1000)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(r) in oldest for r in records)


def test_a_cycle_made_during_the_pause_is_still_collected():
    import weakref

    with gc_paused():
        a, b = _Record(), _Record()
        a.other, b.other = b, a
        alive = weakref.ref(a)
    del a, b
    gc.collect()
    assert alive() is None


def test_objects_the_process_froze_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            _ = [_Record() for _ in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
