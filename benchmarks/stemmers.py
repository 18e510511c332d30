"""Stemmers compared on ranking quality, speed and import cost.

    python benchmarks/stemmers.py [--porter-rev REV] [--folds 10]

Candidates: PyStemmer's Snowball English (the shipped one) and Porter, the pure-Python
``snowballstemmer`` English (if installed), and the hand-written Porter (1980) rules
``lemon_skills`` carried before, read from git revision ``--porter-rev``. Each is swapped
into ``lemon_skills.search.tokens.stem`` and the bench queries are ranked and
cross-validated as in ``retrieval_eval.py``; speed is stemming every distinct word of the
bench skills once, import cost a fresh interpreter's ``-X importtime``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

from corpus import bench_dir, bench_root, make_corpus

from lemon_skills.search import tokens
from lemon_skills.search.metrics import Report, evaluate, load_cases
from lemon_skills.skills import api
from lemon_skills.skills.ranking import find, tuning
from lemon_skills.skills.ranking.index import _ANALYSED, build_index

StemFn = Callable[[str], str]
#: The last revision whose tokeniser carried the hand-written Porter stemmer.
PORTER_REV = "47be413b15a925b874dabf6bca41632fd8d1c7fc"
PORTER_PATH = "src/lemon_skills/search/tokens.py"


def _candidates(porter_rev: str) -> dict[str, tuple[StemFn, str]]:
    import Stemmer

    out: dict[str, tuple[StemFn, str]] = {
        "pystemmer english": (Stemmer.Stemmer("english").stemWord, "Stemmer"),
        "pystemmer porter": (Stemmer.Stemmer("porter").stemWord, "Stemmer"),
    }
    try:
        import snowballstemmer

        out["snowballstemmer english"] = (
            snowballstemmer.stemmer("english").stemWord,
            "snowballstemmer",
        )
    except ImportError:
        pass
    root = Path(__file__).resolve().parents[1]
    show = ["git", "-C", str(root), "show", f"{porter_rev}:{PORTER_PATH}"]
    source = subprocess.run(show, capture_output=True, text=True, check=False).stdout
    if "_porter" in source:
        old = types.ModuleType("old_tokens")
        exec(compile(source, "old_tokens", "exec"), old.__dict__)  # noqa: S102 - our own file
        out["hand-written porter"] = (old._porter, "")
    return out


def _guarded(fn: StemFn) -> StemFn:
    def stem(word: str) -> str:
        return word if len(word) <= 2 or not word.isalpha() else fn(word)

    return stem


def _import_ms(module: str) -> float:
    if not module:
        return 0.0
    cmd = [sys.executable, "-X", "importtime", "-c", f"import {module}"]
    err = subprocess.run(cmd, capture_output=True, text=True, check=False).stderr
    line = [x for x in err.splitlines() if x.rstrip().endswith(f"| {module}")][-1]
    return int(line.split("|")[1]) / 1000


def _with_stemmer(fn: StemFn, run: Callable[[], Report]) -> Report:
    """``run()`` with ``fn`` as the stemmer and every memo of stems and tokens emptied."""
    shipped = tokens.stem
    tokens.stem = _guarded(fn)  # type: ignore[assignment]
    try:
        tokens._TERM_OF.clear()
        _ANALYSED.clear()
        return run()
    finally:
        tokens.stem = shipped
        tokens._TERM_OF.clear()
        _ANALYSED.clear()


def _fmt(r: Report) -> str:
    return (
        f"{r.recall_at_1:.3f} / {r.recall_at_3:.3f} / {r.none_rejection:.3f} / "
        f"{r.false_rejection:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--porter-rev", default=PORTER_REV)
    parser.add_argument("--folds", type=int, default=10)
    args = parser.parse_args()
    cases = [c for f in sorted(bench_root().glob("queries_dev*.jsonl")) for c in load_cases(f)]
    words: set[str] = set()
    for p in bench_dir().iterdir():
        if (p / "SKILL.md").is_file():
            words.update(re.findall("[a-z]+", (p / "SKILL.md").read_text("utf-8").lower()))
    distinct = sorted(w for w in words if len(w) > 2)
    print(f"{len(cases)} queries, {len(distinct)} distinct words, CV = {args.folds} folds\n")
    print(
        "| stemmer | dev R@1 / R@3 / none / false | CV R@1 / R@3 / none / false | ms | import ms |"
    )
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        make_corpus(Path(tmp), len(list(bench_dir().iterdir())))
        entries = api.view(tmp).enabled()

        def dev() -> Report:
            index = build_index(entries)
            return evaluate(cases, lambda q: [m.entry.key for m in find.rank(index, q, limit=10)])

        def cv() -> Report:
            return tuning.cross_validate(entries, cases, folds=args.folds).cv.report

        for name, (fn, module) in _candidates(args.porter_rev).items():
            t = time.perf_counter()
            for w in distinct:
                fn(w)
            ms = (time.perf_counter() - t) * 1000
            row = f"{_fmt(_with_stemmer(fn, dev))} | {_fmt(_with_stemmer(fn, cv))}"
            print(f"| {name} | {row} | {ms:.1f} | {_import_ms(module):.1f} |", flush=True)


if __name__ == "__main__":
    main()
