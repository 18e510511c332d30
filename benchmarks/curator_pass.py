"""Time the curator over a large library of agent-authored skills.

    python benchmarks/curator_pass.py --count 5000

Builds ``count`` skills with usage records spread over a year of activity in a temporary
project, then times the pure planner, a dry run, a real pass (snapshot, sidecar, skills.json,
report) and a rollback of it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lemon_skills.skills.curator import rollback as curator_rollback
from lemon_skills.skills.curator import run as curator_run
from lemon_skills.skills.curator.plan import Thresholds, plan_curation
from lemon_skills.skills.usage.store import iso, usage_path

NOW = datetime(2026, 5, 6, tzinfo=UTC)


def build(project: Path, count: int) -> None:
    """``count`` agent skills on disk and one sidecar with a record each."""
    root = project / ".lemon" / "skill"
    records = {}
    for i in range(count):
        key = f"skill-{i}"
        (root / key).mkdir(parents=True)
        (root / key / "SKILL.md").write_text(f"---\nname: {key}\n---\nbody\n", encoding="utf-8")
        loaded = NOW - timedelta(days=i % 365)
        records[key] = {
            "created_by": "agent",
            "created_at": iso(loaded - timedelta(days=30)),
            "last_loaded_at": iso(loaded),
            "load_count": 1 + i % 7,
            "lifecycle_state": "active",
            "pinned": i % 50 == 0,
        }
    path = usage_path("project", project)
    path.write_text(json.dumps({"version": 1, "skills": records}), encoding="utf-8")


def timed(label: str, fn: object) -> object:
    start = time.perf_counter()
    out = fn()  # type: ignore[operator]
    print(f"{label:<12} {1000 * (time.perf_counter() - start):8.1f} ms")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        build(project, args.count)
        records = json.loads(usage_path("project", project).read_text("utf-8"))["skills"]
        th = Thresholds(max_archives=None)
        plan = timed("plan", lambda: plan_curation(records, now=NOW, thresholds=th))
        timed("dry run", lambda: curator_run.run("project", project, now=NOW, dry_run=True))
        timed("run", lambda: curator_run.run("project", project, now=NOW, thresholds=th))
        timed("rollback", lambda: curator_rollback.rollback("project", project))
        print(f"skills={args.count} {plan.summary}")  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
