"""Could a first prompt rank without indexing every skill body? Top-1 agreement with the full
index for cheaper indexes, and what each costs to build.

    python benchmarks/first_prompt_ranking.py [--size 10000]

Each variant indexes the same skills with the same weights and scorer but less text: the
short fields alone (key and name, keywords, description), those plus the body's headings
and "when to use" sections, and those plus the first 1,000 / 2,000 / 4,000 characters of the
body (the full index reads 20,000). For every bench query (``queries_dev*.jsonl``) the
variant's first answer, or its abstention, is compared with the full index's: a first prompt
that ranked with the variant would inject the same skill that often. With ``--size`` the CPU
seconds to build each variant over a corpus of that many skills (``corpus.make_corpus``) are
printed too.

The last variant, "focused on the request", is what a first query of a large tree never
indexed is answered from (``ranking.focused_index``): built per request, it counts only the
terms the request can reach, exactly, and estimates each body's length from its characters.
Its agreement is given for the first answer and for the whole top 3. ``--size`` times it
for the first bench query.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from corpus import bench_dir, bench_root, make_corpus

from lemon_skills import search
from lemon_skills.search import focus
from lemon_skills.search.metrics import load_cases
from lemon_skills.skills.catalog import registry
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find
from lemon_skills.skills.ranking import index as ranking
from lemon_skills.skills.selection import evaluation

Fields = Callable[[Entry], dict[str, str]]


def _variant(body_chars: int | None, headings: bool) -> Fields:
    def fields(e: Entry) -> dict[str, str]:
        f = ranking.entry_fields(e)
        f["body"] = f["body"][:body_chars] if body_chars else ""
        if not headings:
            f["headings"] = f["usage"] = ""
        return f

    return fields


VARIANTS: dict[str, Fields] = {
    "short fields": _variant(None, headings=False),
    "+ headings, usage": _variant(None, headings=True),
    "+ body[:1000]": _variant(1_000, headings=True),
    "+ body[:2000]": _variant(2_000, headings=True),
    "+ body[:4000]": _variant(4_000, headings=True),
}


def build(entries: list[Entry], fields: Fields) -> ranking.Index:
    docs = [
        search.Document(e.key, fields(e), names=(e.key, e.name), priority=ranking._priority(e))
        for e in entries
    ]
    return ranking.Index(tuple(entries), search.build_index(docs, ranking.DEFAULT_WEIGHTS))


def first(index: ranking.Index, query: str) -> list[str]:
    return [m.entry.key for m in find.rank(index, query, limit=1)]


def agreement() -> None:
    entries = evaluation._entries_in(bench_dir())
    files = sorted(bench_root().glob("queries_dev*.jsonl"))
    queries = [c.query for f in files for c in load_cases(f)]
    full = [first(ranking.build_index(entries), q) for q in queries]
    print(f"top-1 agreement with the full index, {len(entries)} skills, {len(queries)} queries")
    for label, fields in VARIANTS.items():
        index = build(entries, fields)
        same = sum(first(index, q) == f for q, f in zip(queries, full, strict=True))
        print(f"  {label:<26} {same}/{len(queries)} = {same / len(queries):.3f}")
    _focused_agreement(entries, queries, full)


def _focused_agreement(entries: list[Entry], queries: list[str], full: list[list[str]]) -> None:
    """The focused index against the full one: first answer and top 3 as shipped, and every
    score of the top 10 when it is given the bodies' true lengths (then it must be exact)."""
    index = ranking.build_index(entries)
    assert index.core.store is not None
    body = index.core.store.lengths[:, ranking.DEFAULT_WEIGHTS.fields.index("body")].tolist()
    docs = [ranking.document(e) for e in entries]
    same1 = same3 = exact = 0
    for q, f in zip(queries, full, strict=True):
        want = [(m.entry.key, m.score) for m in find.rank(index, q, limit=10)]
        got = [m.entry.key for m in find.rank(ranking.focused_index(entries, q), q, limit=3)]
        same1 += got[:1] == f
        same3 += got == [k for k, _ in want[:3]]
        true = focus.focused_index(docs, ranking.DEFAULT_WEIGHTS, q, long_lengths={"body": body})
        given = find.rank(ranking.Index(tuple(entries), true), q, limit=10)
        exact += [(m.entry.key, m.score) for m in given] == want
    n = len(queries)
    print(
        f"  {'focused on the request':<26} {same1}/{n} = {same1 / n:.3f}"
        f" (top 3 identical {same3}/{n}; given the true body lengths, top 10 and scores"
        f" identical {exact}/{n})"
    )


def build_cost(size: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEMON_AGENT_DIR"] = str(Path(tmp) / "agent")
        make_corpus(Path(tmp), size)
        entries = list(registry.view(tmp, refresh=True).enabled())
        for e in entries:
            _ = e.body, e.manifest  # read once, outside the timings
        print(f"build CPU seconds at {size} skills")
        variants = {**VARIANTS, "full index": ranking.entry_fields}
        for label, fields in variants.items():
            c = time.process_time()
            build(entries, fields)
            print(f"  {label:<26} {time.process_time() - c:6.2f} s")
        c = time.process_time()
        files = sorted(bench_root().glob("queries_dev*.jsonl"))
        ranking.focused_index(entries, load_cases(files[0])[0].query)
        print(f"  {'focused on the request':<26} {time.process_time() - c:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=0, help="also time builds at this size")
    args = parser.parse_args()
    agreement()
    if args.size:
        build_cost(args.size)


if __name__ == "__main__":
    main()
