"""Cold and warm skill listing against the cost of reading every SKILL.md once.

    python benchmarks/list_latency.py [--counts 1000 10000] [--runs 5] [--clock wall|cpu]

The design target: a cold ``lemon skill list`` at 10,000 skills within 2x of reading every
SKILL.md once. "Cold" is a new process with the files in the page cache and the manifest cache
already written by an earlier run (the second agent start).

Figures, each the median of ``--runs`` runs:

* ``read-all``: open and read each SKILL.md once in this process, the floor any loader pays.
* ``read-all proc``: the same as a whole process, ``python -c`` with a loop over the files,
  and ``cat`` of every file. A CLI run is a process too, so these are its honest floor.
* ``no cache``: a fresh registry with ``LEMON_SKILLS_CACHE=0`` (parses every file: the first
  ever start).
* ``cold``: a fresh registry in this process, manifest cache present.
* ``warm``: the same registry again with nothing changed.
* ``CLI``: wall time of a whole ``lemon skill list --json`` process, manifest cache present.

Ratios: ``cold/read-all`` (in process) and ``CLI/read-all proc`` (process against process).

``--clock cpu`` times CPU instead of wall time (this process's, plus its children's for the
process figures): on a machine other jobs keep busy, wall time mostly measures them. To compare
two checkouts, run this script with each one's interpreter (it times the ``lemon_skills`` that
interpreter imports), alternating.
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import make_corpus  # noqa: E402

from lemon_skills.skills.catalog.registry import Registry  # noqa: E402

READ_ALL_PY = """
import os, sys
for d in os.scandir(sys.argv[1]):
    with open(os.path.join(d.path, "SKILL.md"), "rb") as fh:
        fh.read()
"""


def cpu_s() -> float:
    """CPU seconds used so far by this process and its finished children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def median_s(fn: Callable[[], object], runs: int, clock: Callable[[], float]) -> float:
    """Median time of ``runs`` calls of ``fn`` on ``clock``, in seconds."""
    out = []
    for _ in range(runs):
        t = clock()
        fn()
        out.append(clock() - t)
    return statistics.median(out)


def read_all(skill_dir: Path) -> None:
    for d in os.scandir(skill_dir):
        with open(os.path.join(d.path, "SKILL.md"), "rb") as fh:
            fh.read()


def run(cmd: list[str], env: dict[str, str]) -> None:
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)


def bench(
    count: int, root: Path, runs: int, env: dict[str, str], clock: Callable[[], float]
) -> dict[str, float]:
    project = root / f"p{count}"
    skill_dir = make_corpus(project, count)
    files = sorted(os.path.join(d.path, "SKILL.md") for d in os.scandir(skill_dir))
    read_all(skill_dir)  # warm the page cache
    r: dict[str, float] = {}
    r["read_all"] = median_s(lambda: read_all(skill_dir), runs, clock)
    py_read = [sys.executable, "-c", READ_ALL_PY, str(skill_dir)]
    r["read_all_py"] = median_s(lambda: run(py_read, env), runs, clock)
    r["cat"] = median_s(lambda: run(["cat", *files], env), runs, clock)
    os.environ["LEMON_SKILLS_CACHE"] = "0"
    r["no_cache"] = median_s(lambda: Registry().view(project), min(runs, 3), clock)
    os.environ["LEMON_SKILLS_CACHE"] = "1"
    Registry().view(project)  # writes the manifest cache
    r["cold"] = median_s(lambda: Registry().view(project), runs, clock)
    reg = Registry(stat_interval=0.5)
    reg.view(project)
    r["warm"] = median_s(lambda: reg.view(project), 200, clock)
    cli = [sys.executable, "-m", "lemon_skills", "skill", "list", "--json", "--cwd", str(project)]
    run(cli, env)  # a first run writes bytecode, as installing the package does
    r["cli"] = median_s(lambda: run(cli, env), runs, clock)
    r["python"] = median_s(lambda: run([sys.executable, "-c", "pass"], env), runs, clock)
    return r


def report(count: int, r: dict[str, float]) -> str:
    ms = {k: v * 1e3 for k, v in r.items()}
    return (
        f"{count:>6} skills\n"
        f"  read-all in process     {ms['read_all']:8.1f} ms\n"
        f"  read-all proc (python)  {ms['read_all_py']:8.1f} ms   (python -c pass "
        f"{ms['python']:.1f} ms)\n"
        f"  read-all proc (cat)     {ms['cat']:8.1f} ms\n"
        f"  no cache (first start)  {ms['no_cache']:8.1f} ms\n"
        f"  cold in process         {ms['cold']:8.1f} ms   "
        f"{r['cold'] / r['read_all']:.2f}x read-all\n"
        f"  warm in process         {ms['warm']:8.3f} ms\n"
        f"  CLI list --json         {ms['cli']:8.1f} ms   "
        f"{r['cli'] / r['read_all_py']:.2f}x read-all proc (python), "
        f"{r['cli'] / r['cat']:.2f}x cat"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="what to time (see above)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # Keep the manifest cache (and everything else) out of the real home directory.
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        os.environ["HOME"] = str(Path(tmp) / "home")
        env = dict(os.environ)
        # An installed package has its bytecode; without it every CLI run would time the compiler.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for count in args.counts:
            clock = cpu_s if args.clock == "cpu" else time.perf_counter
            print(report(count, bench(count, Path(tmp), args.runs, env, clock)), flush=True)


if __name__ == "__main__":
    main()
