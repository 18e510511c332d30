"""Wall time of ``lemon skill find --semantic`` in a new process, before and after the vector
cache exists, over the bench skills.

    python benchmarks/semantic_latency.py [--count 453] [--runs 3]

The first run embeds every skill and stores the vectors (keyed by the embedded text and the
model's identity); later runs, each a new process as an agent's CLI call would be, load the
model, read the vectors and embed only the query. A lexical ``lemon skill find`` is timed
beside them for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import make_corpus

QUERY = "merge two pdf files and extract the tables"


def _run(cwd: Path, env: dict[str, str], *extra: str) -> float:
    cmd = [sys.executable, "-m", "lemon_skills", "skill", "find", QUERY, "--cwd", str(cwd)]
    t = time.perf_counter()
    subprocess.run([*cmd, *extra], env=env, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=453)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_corpus(root, args.count)
        env = {**os.environ, "LEMON_AGENT_DIR": str(root / "agent")}
        first = _run(root, env, "--semantic")
        cached = [_run(root, env, "--semantic") for _ in range(args.runs)]
        lexical = [_run(root, env) for _ in range(args.runs)]
    print(f"{args.count} skills, wall seconds of one `lemon skill find` process")
    print(f"  --semantic, no vector cache      {first:6.2f}")
    print(f"  --semantic, vectors cached (p50) {statistics.median(cached):6.2f}")
    print(f"  lexical (p50)                    {statistics.median(lexical):6.2f}")


if __name__ == "__main__":
    main()
