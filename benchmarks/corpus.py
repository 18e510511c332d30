"""Build large skill corpora for benchmarks by copying the bench skills under new keys.

    python benchmarks/corpus.py DEST --count 10000

DEST gets ``DEST/.lemon/skill/<key>/SKILL.md`` (a project layout). Copies after the first
round get a numeric suffix on the key (``pdf-7``) and that key as ``name:``, so no two skills
share a name; the rest of the text is unchanged, which is what matters for parse, stat and
tokenising costs.

The bench (a folder holding ``skills/`` and the ``queries_*.jsonl`` files) is
``$LEMON_BENCH_DIR`` when set, else the first ``shared/bench`` found beside the checkout or
any folder above it (or above the current directory).

When a benchmark of this folder runs, importing this module also points ``LEMON_AGENT_DIR``
(unless it is set) at ``benchmarks/out/agent``: a benchmark run by hand keeps its pins,
approvals and caches there, never in the user's own agent dir, and the embedding cache
survives between runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lemon_skills.search.metrics import Case
    from lemon_skills.skills.format.model import Entry

_NAME = re.compile(r"^name:.*$", re.M)

_HERE = Path(__file__).resolve().parent
# Only for a benchmark run as a script from this folder: a test importing these helpers keeps
# the agent dir its own fixtures give it.
if sys.argv and Path(sys.argv[0]).resolve().parent == _HERE:
    os.environ.setdefault("LEMON_AGENT_DIR", str(_HERE / "out" / "agent"))


def bench_root() -> Path:
    """The bench folder: ``$LEMON_BENCH_DIR``, else ``shared/bench`` above the checkout."""
    env = os.environ.get("LEMON_BENCH_DIR")
    candidates = [Path(env)] if env else []
    # ``shared/bench`` beside the checkout or beside any folder holding it (a worktree).
    for start in (Path(__file__).resolve().parents[1], Path.cwd()):
        candidates += [parent / "shared" / "bench" for parent in start.parents]
    for candidate in candidates:
        if (candidate / "skills").is_dir():
            return candidate
    raise SystemExit("no bench found: set LEMON_BENCH_DIR to the folder holding skills/")


def bench_dir() -> Path:
    """The bench skills (``<bench>/skills``)."""
    return bench_root() / "skills"


def dev_cases() -> list[Case]:
    """Every labelled dev request of the bench (``queries_dev*.jsonl``), file by file."""
    from lemon_skills.search.metrics import load_cases

    return [c for f in sorted(bench_root().glob("queries_dev*.jsonl")) for c in load_cases(f)]


@contextlib.contextmanager
def bench_entries() -> Iterator[list[Entry]]:
    """The bench skills laid out as a project in a temporary folder, as the registry lists
    them (enabled ones, in order); the folder is removed on exit."""
    from lemon_skills.skills import api

    with tempfile.TemporaryDirectory() as tmp:
        make_corpus(Path(tmp), len(list(bench_dir().iterdir())))
        yield list(api.view(tmp).enabled())


def make_corpus(dest: Path, count: int, *, source: Path | None = None) -> Path:
    """Create ``count`` skills under ``dest/.lemon/skill`` and return that dir."""
    src = sorted(p for p in (source or bench_dir()).iterdir() if (p / "SKILL.md").is_file())
    out = dest / ".lemon" / "skill"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (dest / ".git").mkdir(exist_ok=True)
    for i in range(count):
        skill = src[i % len(src)]
        key = skill.name if i < len(src) else f"{skill.name}-{i // len(src)}"
        (out / key).mkdir()
        if key == skill.name:
            shutil.copyfile(skill / "SKILL.md", out / key / "SKILL.md")
            continue
        text = (skill / "SKILL.md").read_text(encoding="utf-8")
        (out / key / "SKILL.md").write_text(_NAME.sub(f"name: {key}", text, count=1), "utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()
    print(make_corpus(args.dest, args.count))


if __name__ == "__main__":
    main()
