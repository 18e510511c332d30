"""A hostile ``paths:`` glob against an ordinary one, on the same deep path.

    python benchmarks/glob_hostile.py [--runs 200]

The design target: one skill's globs cost a few milliseconds at most, whatever they say. The
anchor is ``**/*.py`` against a path 200 directories deep; the hostile patterns are twelve
``**/`` before a name that almost matches (a backtracking regex spins for minutes on it), forty
stars in one name, and a brace product that would expand to a million alternatives. Printed:
the median time of each and its ratio to the anchor. The compile cache is cleared before each
run, so compiling counts.
"""

from __future__ import annotations

import argparse
import statistics
import time

from lemon_skills.skills.selection import globs

DEEP = "a/" * 200 + "x.pyc"
PATTERNS = {
    "anchor **/*.py": "**/*.py",
    "twelve **/": "**/" * 12 + "x.py",
    "forty stars": "*a" * 40 + "*b",
    "brace product": "{a,b}" * 20,
}


def _median_s(pattern: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        globs._compile.cache_clear()
        start = time.perf_counter()
        globs.matches_path(pattern, DEEP)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    anchor = _median_s(PATTERNS["anchor **/*.py"], args.runs)
    for label, pattern in PATTERNS.items():
        took = _median_s(pattern, args.runs)
        print(f"{label:16} {took * 1e3:8.3f} ms  {took / anchor:6.1f}x anchor")


if __name__ == "__main__":
    main()
