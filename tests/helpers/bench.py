"""The labelled bench (skills, tools and their requests), when this checkout has one beside it."""

from __future__ import annotations

from pathlib import Path

from benchmarks.corpus import bench_root


def find_bench() -> Path | None:
    """The bench folder, or None. Call it at import: the test environment drops LEMON_*
    variables (``LEMON_BENCH_DIR`` too) before each test."""
    try:
        return bench_root()
    except SystemExit:
        return None
