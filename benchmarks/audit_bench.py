"""Measure the install audit on the bench skills: verdicts (false-positive rate) and speed.

    python benchmarks/audit_bench.py [--show]

Every bench skill is a real, public, benign skill, so each ``block`` is a false positive and
each ``warn`` should be something a reviewer would want to see. ``--show`` lists findings.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import bench_dir  # noqa: E402

from lemon_skills.skills.audit.scan import audit_bundle  # noqa: E402
from lemon_skills.skills.format.bundle import collect  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every finding")
    args = parser.parse_args()
    dirs = sorted(p for p in bench_dir().iterdir() if (p / "SKILL.md").is_file())
    bundles = [(d.name, collect(d)) for d in dirs]
    timings, verdicts = [], collections.Counter()
    rules: collections.Counter[tuple[str, str]] = collections.Counter()
    for name, bundle in bundles:
        start = time.perf_counter()
        report = audit_bundle(bundle.files, name=name)
        timings.append(time.perf_counter() - start)
        verdicts[report.verdict] += 1
        rules.update((f.rule, f.severity) for f in report.findings)
        if args.show:
            for f in report.findings:
                print(f"{name}: {f.summary()}\n    {f.excerpt}")
    n = len(bundles)
    print(f"skills: {n}  " + "  ".join(f"{v}: {verdicts[v]}" for v in ("pass", "warn", "block")))
    print(
        f"false-positive blocks: {verdicts['block'] / n:.1%}  warn rate: {verdicts['warn'] / n:.1%}"
    )
    ms = sorted(t * 1000 for t in timings)
    print(
        f"audit per skill: median {statistics.median(ms):.2f} ms, "
        f"p95 {ms[int(0.95 * (n - 1))]:.2f} ms, max {ms[-1]:.2f} ms, total {sum(ms):.0f} ms"
    )
    for (rule, sev), count in rules.most_common():
        print(f"  {rule} [{sev}]: {count}")


if __name__ == "__main__":
    main()
