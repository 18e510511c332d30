"""CPU of a skill's search fields, body headings and "when to use" sections found by regex
against the ``str.find`` scan ``entry_fields`` uses.

    python benchmarks/field_extraction.py [--size 10000] [--rounds 3]

A corpus of ``--size`` skills (``corpus.make_corpus``) is loaded once, every body read
outside the timings. Then, ``--rounds`` times and alternating, the CPU seconds to compute the
fields of every skill with:

* ``regex``: ``entry_fields`` as it was, its code fences dropped by a multi-line regex
  anchored at line starts and its headings and usage sections found by more
  (``regex_fields.py``);
* ``scan``: ``entry_fields`` as shipped.

Each figure is the fastest round (the median in brackets). The two must give the same fields
for every skill: the script counts the skills where they differ (0 expected).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from corpus import make_corpus
from regex_fields import regex_entry_fields

from lemon_skills.skills.catalog import registry
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import index as ranking


def cpu_s(fields: Callable[[Entry], dict[str, str]], entries: list[Entry]) -> float:
    gc.collect()
    start = time.process_time()
    for e in entries:
        fields(e)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        make_corpus(Path(tmp), args.size)
        entries = list(registry.view(tmp, refresh=True).enabled())
        for e in entries:
            _ = e.body, e.manifest
        differ = sum(regex_entry_fields(e) != ranking.entry_fields(e) for e in entries)
        chars = sum(len(e.body[: ranking.BODY_CHARS]) for e in entries)
        times: dict[str, list[float]] = {"regex": [], "scan": []}
        for _ in range(args.rounds):
            times["regex"].append(cpu_s(regex_entry_fields, entries))
            times["scan"].append(cpu_s(ranking.entry_fields, entries))
    print(f"{len(entries)} skills, {chars / 1e6:.1f} M body characters; differing: {differ}")
    for label, runs in times.items():
        print(f"  {label:<6} {min(runs):6.3f} s CPU ({statistics.median(runs):.3f})")
    print(f"  scan/regex {min(times['scan']) / min(times['regex']):.3f}")


if __name__ == "__main__":
    main()
