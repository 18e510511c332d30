"""CPU and wall time of ``lemon skill find --semantic`` in a new process, before and after the
vector cache exists, over the bench skills; A/B interleaved across source trees.

    python benchmarks/semantic_latency.py [--count 453] [--runs 3] [--cold 1] [--split 0]
                                          [--src DIR ...]

Each ``--src`` is a ``src`` folder of a lemon-skills checkout (default: the installed package)
with its own agent dir. Per variant, the first run embeds every skill and stores the vectors
(keyed by the embedded text and the model's identity; ``--cold N`` repeats it N times, each
in a fresh agent dir, the variants interleaved); then, each round, every variant runs once
with the vectors cached and once lexically, each a new process as an agent's CLI call would
be, the variants' order alternating between rounds so a busy machine weighs on them alike.
Every source tree is byte-compiled first. Printed per variant: CPU seconds (user + system of
the child, all its threads) and wall seconds, medians of the runs with no cache, with it, and
lexical; the load average is printed beside them, as wall time on a shared machine means
little without it. ``--split N`` also runs, N times per variant (interleaved), a new process
that loads the model and embeds the query, and prints the median CPU milliseconds of each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import make_corpus

import lemon_skills

QUERY = "merge two pdf files and extract the tables"


def _run(cwd: Path, agent: Path, src: str | None, *extra: str) -> tuple[float, float]:
    env = {**os.environ, "LEMON_AGENT_DIR": str(agent)}
    if src:
        env["PYTHONPATH"] = src
    cmd = [sys.executable, "-m", "lemon_skills", "skill", "find", QUERY, "--cwd", str(cwd)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([*cmd, *extra], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


_SPLIT = """
import json, time
t = time.process_time()
from lemon_skills.search import embed
enc = embed._load_encoder()
loaded = time.process_time()
enc.encode([{query!r}])
done = time.process_time()
print(json.dumps([loaded - t, done - loaded]))
"""


def _split(src: str | None) -> tuple[float, float]:
    """CPU seconds to import and load the model, and to embed the query, in a new process."""
    env = {**os.environ, **({"PYTHONPATH": src} if src else {})}
    code = _SPLIT.format(query=QUERY)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    load, query = json.loads(out.stdout)
    return load, query


def _order(n: int, round_no: int) -> list[int]:
    """The variants in order, reversed every other round."""
    return list(range(n))[:: -1 if round_no % 2 else 1]


def _fmt(runs: list[tuple[float, float]]) -> str:
    if not runs:
        return "   not run"
    cpu = statistics.median(c for c, _ in runs)
    wall = statistics.median(w for _, w in runs)
    return f"{cpu:6.2f} CPU {wall:6.2f} wall"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=453)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", type=int, default=1, help="runs with no vector cache")
    parser.add_argument("--split", type=int, default=0, help="model load / query CPU runs")
    parser.add_argument("--src", action="append", default=None, help="a checkout's src folder")
    args = parser.parse_args()
    srcs: list[str | None] = list(args.src or [None])
    for src in srcs:
        # Byte-compiled first, so no variant pays for compiling its modules in every process
        # (as it would with PYTHONDONTWRITEBYTECODE set or an unwritable tree).
        tree = src or str(Path(lemon_skills.__file__).parent)
        subprocess.run([sys.executable, "-m", "compileall", "-q", tree], check=True)
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_corpus(root, args.count)
        first: list[list[tuple[float, float]]] = [[] for _ in srcs]
        for c in range(args.cold):
            for i in _order(len(srcs), c):
                agent = root / f"agent-{i}-{c}"
                first[i].append(_run(root, agent, srcs[i], "--semantic"))
        agents = [root / f"agent-{i}-0" for i in range(len(srcs))]
        cached: list[list[tuple[float, float]]] = [[] for _ in srcs]
        lexical: list[list[tuple[float, float]]] = [[] for _ in srcs]
        for r in range(args.runs):
            for i in _order(len(srcs), r):
                if args.cold:  # else there is no vector cache to read
                    cached[i].append(_run(root, agents[i], srcs[i], "--semantic"))
                lexical[i].append(_run(root, agents[i], srcs[i]))
        split: list[list[tuple[float, float]]] = [[] for _ in srcs]
        for r in range(args.split):
            for i in _order(len(srcs), r):
                split[i].append(_split(srcs[i]))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(
        f"{args.count} skills, seconds of one `lemon skill find` process "
        f"(medians of {args.cold} runs with no vector cache, {args.runs} with it)"
    )
    for i, src in enumerate(srcs):
        print(f"\n{src or 'installed package'}")
        print(f"  --semantic, no vector cache     {_fmt(first[i])}")
        print(f"  --semantic, vectors cached      {_fmt(cached[i])}")
        print(f"  lexical                         {_fmt(lexical[i])}")
        if split[i]:
            load = statistics.median(a for a, _ in split[i]) * 1000
            query = statistics.median(b for _, b in split[i]) * 1000
            print(f"  model import + load {load:6.1f} ms CPU, one query {query:6.1f} ms CPU")


if __name__ == "__main__":
    main()
