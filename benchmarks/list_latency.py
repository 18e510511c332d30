"""Cold and warm ``list()`` against the cost of reading every SKILL.md once.

    python benchmarks/list_latency.py [--counts 1000 10000]

Cold = a fresh registry (files already in the page cache, as on a second agent start); warm =
the same registry again with nothing changed. ``read-all`` = open and read each SKILL.md once,
the floor any loader pays. The CLI figure is a whole ``lemon skill list --json`` process.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import make_corpus  # noqa: E402

from lemon_skills.skills.registry import Registry  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def read_all(skill_dir: Path) -> None:
    for d in os.scandir(skill_dir):
        with open(os.path.join(d.path, "SKILL.md"), "rb") as fh:
            fh.read()


def bench(count: int, root: Path) -> dict[str, float]:
    project = root / f"p{count}"
    skill_dir = make_corpus(project, count)
    read_all(skill_dir)  # warm the page cache
    read = statistics.median(timed(lambda: read_all(skill_dir), 5))
    os.environ["LEMON_SKILLS_CACHE"] = "0"
    first = statistics.median(timed(lambda: Registry().view(project), 3))
    os.environ["LEMON_SKILLS_CACHE"] = "1"
    Registry().view(project)  # writes the manifest cache
    cold = statistics.median(timed(lambda: Registry().view(project), 5))
    reg = Registry(stat_interval=0.5)
    reg.view(project)
    warm = statistics.median(timed(lambda: reg.view(project), 200))
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "lemon_skills", "skill", "list", "--json", "--cwd", str(project)]

    def cli() -> None:
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)

    cli_s = statistics.median(timed(cli, 3))
    bare = statistics.median(
        timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 3)
    )
    return {
        "read_all_ms": read * 1e3,
        "first_ms": first * 1e3,
        "cold_ms": cold * 1e3,
        "warm_ms": warm * 1e3,
        "cli_ms": cli_s * 1e3,
        "python_start_ms": bare * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1000, 10_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # Keep the manifest cache (and everything else) out of the real home directory.
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        os.environ["HOME"] = str(Path(tmp) / "home")
        for count in args.counts:
            r = bench(count, Path(tmp))
            print(
                f"{count:>6} skills: read-all {r['read_all_ms']:.1f} ms | no cache "
                f"{r['first_ms']:.0f} ms | cold list "
                f"{r['cold_ms']:.1f} ms ({r['cold_ms'] / r['read_all_ms']:.2f}x) | warm list "
                f"{r['warm_ms']:.3f} ms | CLI list --json {r['cli_ms']:.0f} ms "
                f"(python start {r['python_start_ms']:.0f} ms)"
            )


if __name__ == "__main__":
    main()
