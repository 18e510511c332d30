"""The index at scale against its floor: reading every SKILL.md once, side by side in one run.

    python benchmarks/index_ratios.py [--size 10000] [--rounds 3]

On one tree of ``--size`` skills (``corpus.make_corpus``), each figure the median of
``--rounds``, the rounds interleaved so a busy machine weighs on all alike:

* ``read`` - open and read every SKILL.md once in this process (the page cache warm), the
  floor any index pays;
* ``build`` - ``build_index`` over the enabled skills (tokenising every field of every skill);
* ``find after one edit`` - a new process calling ``find_relevant`` once after one SKILL.md
  was edited, with the index cached on disk (``retrieval_latency.py``'s child; the call's
  time, without the interpreter's start and imports), each round a new edit.

Printed in wall and CPU seconds with the ratios to ``read`` (targets: build <= 8x, find after
one edit <= 2x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from corpus import make_corpus
from retrieval_latency import _child, _edit

import lemon_skills
from lemon_skills.skills import api
from lemon_skills.skills.ranking.index import build_index


def _clock(call: object) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    call()  # type: ignore[operator]
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        tree = Path(tmp)
        make_corpus(tree, args.size)
        entries = list(api.view(tmp, refresh=True).enabled())
        files = [e.skill_file for e in entries]
        lemon_skills.find_relevant("warm up", cwd=tmp)  # writes the cached index
        rows: dict[str, list[tuple[float, float]]] = {"read": [], "build": [], "edit": []}
        for i in range(args.rounds):
            rows["read"].append(_clock(lambda: [f.read_text(encoding="utf-8") for f in files]))
            rows["build"].append(_clock(lambda: build_index(entries)))
            _edit(entries, i)
            child = _child(tree, "merge two pdf files")
            rows["edit"].append((child["find"], child["cpu_find"]))
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for k, v in rows.items()
    }
    read_w, read_c = med["read"]
    print(f"{args.size} skills, median of {args.rounds} interleaved rounds")
    for key, label in (
        ("read", "read every SKILL.md"),
        ("build", "build the index"),
        ("edit", "find after one edit"),
    ):
        w, c = med[key]
        ratios = f"({w / read_w:5.1f}x)  {c:8.3f} s cpu ({c / read_c:5.1f}x)"
        print(f"  {label:<22} {w:8.3f} s wall {ratios}")


if __name__ == "__main__":
    main()
