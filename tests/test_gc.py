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
