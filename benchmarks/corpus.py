"""Build large skill corpora for benchmarks by copying the bench skills under new keys.

    python benchmarks/corpus.py DEST --count 10000

DEST gets ``DEST/.lemon/skill/<key>/SKILL.md`` (a project layout). Copies after the first
round get a numeric suffix on the directory key (``pdf-7``); their text is unchanged, which is
what matters for parse and stat costs.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "skills"


def bench_dir() -> Path:
    """The shared bench skills (``../shared/bench/skills`` next to the checkout)."""
    for candidate in (BENCH, Path.cwd().parent / "shared" / "bench" / "skills"):
        if candidate.is_dir():
            return candidate
    raise SystemExit("cannot find shared/bench/skills next to this checkout")


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
        shutil.copyfile(skill / "SKILL.md", out / key / "SKILL.md")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()
    print(make_corpus(args.dest, args.count))


if __name__ == "__main__":
    main()
