"""CPU of a new ``lemon skill find`` process after one SKILL.md was edited, A/B interleaved.

    python benchmarks/find_after_edit.py [--size 10000] [--rounds 5] [--src DIR ...]

A project corpus of ``--size`` skills is made with ``corpus.make_corpus``. Each ``--src`` is a
``src`` folder of a lemon-skills checkout (default: the installed package) and gets its own
agent dir (its own manifest cache and cached index), warmed by one ``lemon skill find``. Then,
each round, one SKILL.md is appended to and every variant runs ``python -m lemon_skills skill
find`` once, in a new process, the variants' order alternating between rounds so a busy
machine weighs on them alike. Printed first: how many bench skills have frontmatter the
plain reader takes (no PyYAML import when one of them is re-parsed); then per variant: the
median and min CPU seconds (user + system of the child) and wall seconds, and the ratio of
the medians to the first variant's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import bench_dir, make_corpus

QUERY = "merge two pdf files"


def _run(tree: Path, src: str | None, agent: Path) -> tuple[float, float]:
    env = dict(os.environ, LEMON_AGENT_DIR=str(agent))
    if src:
        env["PYTHONPATH"] = src
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "lemon_skills", "skill", "find", QUERY],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def _plain_share() -> tuple[int, int]:
    from lemon_skills.skills.format.frontmatter import plain_mapping, split_frontmatter

    files = sorted(bench_dir().glob("*/SKILL.md"))
    plain = 0
    for f in files:
        split = split_frontmatter(f.read_text(encoding="utf-8"))
        plain += split.format == "yaml" and plain_mapping(split.frontmatter) is not None
    return plain, len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--src", action="append", default=None)
    args = parser.parse_args()
    variants: list[str | None] = list(args.src or [None])
    plain, total = _plain_share()
    print(f"bench skills with plain frontmatter (read without PyYAML): {plain} of {total}")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        make_corpus(tree, args.size)
        skills = sorted((tree / ".lemon" / "skill").iterdir())
        agents = [Path(tmp) / f"agent{i}" for i in range(len(variants))]
        for src, agent in zip(variants, agents, strict=True):
            _run(tree, src, agent)
        cpu: list[list[float]] = [[] for _ in variants]
        wall: list[list[float]] = [[] for _ in variants]
        for r in range(args.rounds):
            with (skills[(len(skills) // 2 + r) % len(skills)] / "SKILL.md").open("a") as fh:
                fh.write(f"\nEdited {r}.\n")
            order = list(range(len(variants)))
            for i in order if r % 2 == 0 else order[::-1]:
                c, w = _run(tree, variants[i], agents[i])
                cpu[i].append(c)
                wall[i].append(w)
        base = statistics.median(cpu[0])
        print(f"{args.size} skills, {args.rounds} rounds, one edit before each round")
        for i, src in enumerate(variants):
            med = statistics.median(cpu[i])
            print(
                f"  {src or 'installed'}: cpu median {med:.3f} s  min {min(cpu[i]):.3f} s"
                f"  wall median {statistics.median(wall[i]):.3f} s  ratio {med / base:.2f}"
            )


if __name__ == "__main__":
    main()
