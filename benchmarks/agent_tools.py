"""Measure the cost of the agent tools' bookkeeping (run by hand, not by pytest).

    python benchmarks/agent_tools.py [--skills 453] [--calls 300]

Prints the median/p90 latency of one usage-sidecar update with N records, of a whole
``read_skill`` call (registry lookup, status, usage update, introspection insert) over the
bench corpus, and of ``skill_manage`` patch. Everything runs in a temporary agent dir.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import make_corpus  # noqa: E402


def timed(fn: Callable[[int], object], n: int) -> tuple[float, float]:
    """Median and p90 in milliseconds of ``fn(i)`` over ``n`` runs."""
    samples = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=453)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["LEMON_AGENT_DIR"] = str(root / "agent")
        from lemon_skills.skills.usage.store import UsageStore
        from lemon_skills.tools import ToolContext, read_skill, skill_manage

        for records in (10, 100, args.skills):
            store = UsageStore(root / f"usage-{records}.json")
            for k in range(records):
                store.record_load({"result": "ok", "key": f"k{k}", "view": "full"})
            med, p90 = timed(
                lambda i, s=store: s.record_load({"result": "ok", "key": "k0", "view": "full"}),
                args.calls,
            )
            print(f"usage record_load, {records:>4} records: median {med:.2f} ms, p90 {p90:.2f} ms")

        project = root / "project"
        (project / ".git").mkdir(parents=True)
        skills = make_corpus(project, args.skills)
        keys = sorted(p.name for p in skills.iterdir())
        ctx = ToolContext(cwd=project, session_id="bench")
        read_skill.call({"key": keys[0]}, ctx)  # warm the registry
        med, p90 = timed(lambda i: read_skill.call({"key": keys[i % len(keys)]}, ctx), args.calls)
        print(f"read_skill full view, {args.skills} skills: median {med:.2f} ms, p90 {p90:.2f} ms")

        skill_manage.call(
            {
                "action": "create",
                "name": "bench-skill",
                "content": "---\nname: bench-skill\ndescription: Bench skill.\n---\n\nv0\n",
            },
            ctx,
        )
        med, p90 = timed(
            lambda i: skill_manage.call(
                {
                    "action": "patch",
                    "name": "bench-skill",
                    "old_string": f"v{i}",
                    "new_string": f"v{i + 1}",
                },
                ctx,
            ),
            min(args.calls, 100),
        )
        print(f"skill_manage patch: median {med:.2f} ms, p90 {p90:.2f} ms")


if __name__ == "__main__":
    main()
