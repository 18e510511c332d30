"""Time the default test suite (the README's ``pytest``) of one or more checkouts, interleaved.

    python benchmarks/suite_time.py [--rounds N] DIR [DIR ...]

Each DIR is a checkout (``src/`` and ``tests/``); its suite runs with ``PYTHONPATH=DIR/src``
under this interpreter, so two checkouts are compared with the same dependencies. Rounds
alternate between the checkouts so a busy machine slows both alike. Per run it prints one JSON
line: wall seconds, the sum of pytest's per-test durations (setup + call + teardown, and each
phase), the CPU seconds of pytest and its children, the 1-minute load average before the run,
and pytest's summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

_DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s")


def run_once(checkout: Path, extra: list[str]) -> dict[str, object]:
    """One run of the suite in ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += ["--durations=0", "--durations-min=0", *extra]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    phases = {"setup": 0.0, "call": 0.0, "teardown": 0.0}
    for line in done.stdout.splitlines():
        m = _DURATION.match(line)
        if m:
            phases[m.group(2)] += float(m.group(1))
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    return {
        "checkout": str(checkout),
        "wall_s": round(wall, 1),
        "durations_sum_s": round(sum(phases.values()), 1),
        "phases_s": {k: round(v, 1) for k, v in phases.items()},
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
        "load_1m_before": round(load, 2),
        "summary": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("checkouts", nargs="+", type=Path)
    opts = parser.parse_args()
    for _ in range(opts.rounds):
        for checkout in opts.checkouts:
            print(json.dumps(run_once(checkout.resolve(), [])), flush=True)


if __name__ == "__main__":
    main()
