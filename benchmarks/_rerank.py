"""A learned second stage, measured and not shipped (``rerank_eval.py``): re-order the lexical
ranker's best documents, and decide whether to answer at all, from generic features of each
match.

The lexical scorer (``scoring``) already sums the evidence; what it cannot do is weigh kinds
of evidence against each other (a match on the name against one in the description, a word
of the document's group against one of its own, a wide lead over the runner-up against a
close call). A linear model over a dozen corpus-neutral features does, and a logistic one
over the best match's features decides whether anything fits. Both are trained on labelled
queries (``train``), never on a query's text: features are numbers about a match, and a
model is a few dozen floats (``Model``), so the same code ranks skills and tools.

Pure Python: ranking 30 candidates costs a few hundred multiplications, and training on a
few hundred labelled queries takes seconds, so ``cross_validate`` can retrain per fold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lemon_skills.search import scoring
from lemon_skills.search import tokens as text
from lemon_skills.search.index import Index
from lemon_skills.search.metrics import Case, Report, outcome, stratified_folds, summarise

#: How many of the lexical ranker's best documents the model re-orders.
DEPTH = 30

#: What the ranking model sees of one candidate (every value is about the match, none about
#: the query's text).
RANK_FEATURES = (
    "log_score",  # the lexical score, log(1 + score)
    "score_ratio",  # the lexical score over the best candidate's
    "inverse_rank",  # 1 / the lexical rank
    "coverage",  # share of the query's IDF mass matched
    "short_share",  # share of the score earned in short fields (name, description...)
    "log_evidence",  # log(1 + evidence in plain IDF)
    "words",  # share of the query's content words the document holds
    "name_words",  # share of the query's content words in the document's own name
    "group_words",  # share of the query's content words in its group's name (a tool's server)
    "name_covered",  # share of the name's content words the query holds
    "group_peers",  # share of the candidates in the same group
    "phrase",  # 1 when a query word pair is a phrase of the document
    "exact_name",  # 1 when the query is the document's name
    "similarity",  # embedding similarity, 0 without the semantic extra
)
#: What the answer-or-abstain model sees: the query, and the chosen first match.
ABSTAIN_FEATURES = (
    "top_log_score",
    "top_log_evidence",
    "top_coverage",
    "top_words",
    "top_name_words",
    "top_group_words",
    "known_words",  # share of the query's content words some document holds
    "log_content_words",
    "model_score",  # the ranking model's score of the first match
    "model_margin",  # ...minus the second's
    "top_similarity",
    "clears_bar",  # 1 when the lexical abstain rule would answer
)


@dataclass(frozen=True, slots=True)
class Linear:
    """A standardised linear function: ``sum(w * (x - mean) / scale) + bias``."""

    weights: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    bias: float = 0.0

    def __call__(self, x: Sequence[float]) -> float:
        s = self.bias
        for w, v, m, d in zip(self.weights, x, self.mean, self.scale, strict=True):
            s += w * (v - m) / d
        return s


@dataclass(frozen=True, slots=True)
class Model:
    """A ranking function over ``RANK_FEATURES`` and an abstain classifier over
    ``ABSTAIN_FEATURES``: answer when its probability of "nothing fits" is below
    ``threshold``."""

    ranker: Linear
    abstainer: Linear
    threshold: float

    def to_json(self) -> str:
        """The model as JSON (numbers and feature names only)."""
        return json.dumps(
            {
                "rank_features": list(RANK_FEATURES),
                "abstain_features": list(ABSTAIN_FEATURES),
                "ranker": _linear_dict(self.ranker),
                "abstainer": _linear_dict(self.abstainer),
                "threshold": self.threshold,
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, data: str) -> Model:
        """Read ``to_json`` output.

        Raises:
            ValueError: not a model, or one over other features.
        """
        try:
            raw = json.loads(data)
            if (
                tuple(raw["rank_features"]) != RANK_FEATURES
                or tuple(raw["abstain_features"]) != ABSTAIN_FEATURES
            ):
                raise ValueError("a model over other features")
            return cls(
                _linear(raw["ranker"], len(RANK_FEATURES)),
                _linear(raw["abstainer"], len(ABSTAIN_FEATURES)),
                float(raw["threshold"]),
            )
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError("not a re-ranking model") from exc


def _linear_dict(f: Linear) -> dict[str, object]:
    return {
        "weights": [round(w, 6) for w in f.weights],
        "mean": [round(m, 6) for m in f.mean],
        "scale": [round(s, 6) for s in f.scale],
        "bias": round(f.bias, 6),
    }


def _linear(raw: Mapping[str, Sequence[float] | float], n: int) -> Linear:
    weights, mean, scale = (tuple(map(float, raw[k])) for k in ("weights", "mean", "scale"))  # type: ignore[arg-type]
    if not len(weights) == len(mean) == len(scale) == n:
        raise ValueError("a model over other features")
    return Linear(weights, mean, scale, float(raw["bias"]))  # type: ignore[arg-type]


# --- features --------------------------------------------------------------------------------


def group_of(key: str) -> str:
    """A document's group: what its key names before a ``/`` (a tool's server), or nothing."""
    head, sep, _ = key.partition("/")
    return head if sep else ""


def _name_terms(key: str) -> tuple[frozenset[str], frozenset[str]]:
    """The content terms of a key's own name and of its group's name."""
    head, sep, tail = key.partition("/")
    own, group = (tail, head) if sep else (key, "")

    def terms(s: str) -> frozenset[str]:
        return frozenset(text.stem(w) for w in text.identifier_words(s) if text.is_content(w))

    return terms(own), terms(group)


@dataclass(frozen=True, slots=True)
class Candidates:
    """The lexical ranker's best documents for one query with each one's features."""

    pool: scoring.Pool
    docs: tuple[int, ...]
    rows: tuple[tuple[float, ...], ...]
    query_row: tuple[float, ...]  # the query-level part of ``ABSTAIN_FEATURES``


def candidates(
    index: Index,
    query: str,
    *,
    depth: int = DEPTH,
    similar: Mapping[int, float] | None = None,
    names: dict[int, tuple[frozenset[str], frozenset[str]]] | None = None,
) -> Candidates | None:
    """Features of the ``depth`` best lexical matches; ``None`` when nothing matches.

    ``names`` memoises each document's name terms across queries.
    """
    p = scoring.pool(index, query, limit=depth, similar=similar)
    if p is None:
        return None
    names = {} if names is None else names
    q = p.query
    content = max(1, q.content)
    by_word: dict[str, list[str]] = {}  # content word -> the terms standing for it
    for qt in q.terms:
        for w in qt.words:
            by_word.setdefault(w, []).append(qt.term)
    qterms = {qt.term for qt in q.terms}
    top = p.final[p.best[0]]
    groups = [group_of(index.keys[d]) for d in p.best]
    exact = index.names.get(q.name)
    rows = []
    for r, d in enumerate(p.best):
        if d not in names:
            names[d] = _name_terms(index.keys[d])
        own, group = names[d]
        score = p.final[d]
        parts, covered = scoring._term_parts(index, q, d, index.idf)
        raw = sum(parts.values())
        held = scoring.matched_words(index, q, d)
        rows.append(
            (
                math.log1p(score),
                score / top if top else 0.0,
                1.0 / (r + 1),
                min(1.0, p.covered[d] / q.mass),
                min(1.0, p.strong[d] / raw) if raw else 0.0,
                math.log1p(scoring.evidence(index, p.plain, d)),
                held / content,
                _share(by_word, own) / content,
                _share(by_word, group) / content,
                len(own & qterms) / len(own) if own else 0.0,
                groups.count(groups[r]) / len(groups) if groups[r] else 0.0,
                1.0 if "phrase" in parts else 0.0,
                1.0 if exact == d else 0.0,
                p.similar.get(d, 0.0),
            )
        )
    query_row = (q.words / content, math.log(content))
    return Candidates(p, tuple(p.best), tuple(rows), query_row)


def _share(by_word: Mapping[str, Sequence[str]], terms: frozenset[str]) -> int:
    if not terms:
        return 0
    return sum(1 for ts in by_word.values() if any(t in terms for t in ts))


def abstain_row(
    index: Index, c: Candidates, order: Sequence[int], model_scores: Sequence[float]
) -> tuple[float, ...]:
    """``ABSTAIN_FEATURES`` for candidates ``c`` re-ordered as ``order`` (positions in
    ``c.docs``) with the ranking model's ``model_scores`` (by position)."""
    first = c.rows[order[0]]
    second = model_scores[order[1]] if len(order) > 1 else model_scores[order[0]] - 5.0
    d = c.docs[order[0]]
    bar = index.weights.semantic_min_score if c.pool.similar else index.weights.min_score
    own = scoring.evidence(index, c.pool.plain, d) + scoring._semantic_bonus(
        index.weights, c.pool.similar.get(d)
    )
    return (
        first[0],
        first[5],
        first[3],
        first[6],
        first[7],
        first[8],
        c.query_row[0],
        c.query_row[1],
        model_scores[order[0]],
        model_scores[order[0]] - second,
        first[13],
        1.0 if own >= bar else 0.0,
    )


def decide(index: Index, model: Model, c: Candidates) -> tuple[list[int], float]:
    """Positions in ``c.docs`` best first by the model, and the probability nothing fits."""
    scores = [model.ranker(row) for row in c.rows]
    order = sorted(range(len(c.docs)), key=lambda i: (-scores[i], i))
    none = _sigmoid(model.abstainer(abstain_row(index, c, order, scores)))
    return order, none


def rank(
    index: Index,
    model: Model,
    query: str,
    *,
    limit: int = 3,
    similar: Mapping[int, float] | None = None,
    names: dict[int, tuple[frozenset[str], frozenset[str]]] | None = None,
) -> list[scoring.Match]:
    """Best-first matches re-ordered by ``model``, ``[]`` when it judges nothing fits.

    Each match's parts are the lexical ones plus ``model`` (its model score) and
    ``none`` (the probability that nothing fits, on the first match).
    """
    c = candidates(index, query, similar=similar, names=names)
    if c is None:
        return []
    order, none = decide(index, model, c)
    if none >= model.threshold:
        return []
    out = []
    for i in order[:limit]:
        d = c.docs[i]
        parts = scoring.parts_of(index, c.pool, d)
        parts["model"] = model.ranker(c.rows[i])
        if not out:
            parts["none"] = none
        out.append(scoring.Match(d, index.keys[d], parts["model"], parts))
    return out


# --- training --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """One labelled query's candidates: which positions are right, whether any is."""

    candidates: Candidates | None
    right: frozenset[int]  # positions in ``candidates.docs`` of expected documents
    none: bool  # the query has no right document


def sample(index: Index, case: Case, c: Candidates | None) -> Sample:
    """Label the candidates of ``case``."""
    want = set(case.expected)
    right = (
        frozenset(i for i, d in enumerate(c.docs) if index.keys[d] in want) if c else frozenset()
    )
    return Sample(c, right, not case.expected)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _standardise(rows: Sequence[Sequence[float]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    n = len(rows)
    dims = len(rows[0])
    mean = tuple(sum(r[j] for r in rows) / n for j in range(dims))
    scale = tuple(
        math.sqrt(sum((r[j] - mean[j]) ** 2 for r in rows) / n) or 1.0 for j in range(dims)
    )
    return mean, scale


@dataclass(slots=True)
class _Adam:
    """Adam steps over one parameter vector (full-batch gradients)."""

    size: int
    rate: float = 0.05
    m: list[float] = field(default_factory=list)
    v: list[float] = field(default_factory=list)
    t: int = 0

    def step(self, params: list[float], grad: Sequence[float]) -> None:
        if not self.m:
            self.m, self.v = [0.0] * self.size, [0.0] * self.size
        self.t += 1
        b1, b2 = 0.9, 0.999
        for j, g in enumerate(grad):
            self.m[j] = b1 * self.m[j] + (1 - b1) * g
            self.v[j] = b2 * self.v[j] + (1 - b2) * g * g
            mh = self.m[j] / (1 - b1**self.t)
            vh = self.v[j] / (1 - b2**self.t)
            params[j] -= self.rate * mh / (math.sqrt(vh) + 1e-8)


def train_ranker(samples: Sequence[Sample], *, l2: float = 0.01, steps: int = 150) -> Linear:
    """Listwise softmax regression: for each query, raise the probability mass of its right
    candidates among all its candidates (queries with none in reach teach nothing)."""
    groups = [
        (s.candidates.rows, s.right)
        for s in samples
        if s.candidates is not None and s.right and len(s.right) < len(s.candidates.rows)
    ]
    dims = len(RANK_FEATURES)
    if not groups:
        return Linear((0.0,) * dims, (0.0,) * dims, (1.0,) * dims)
    mean, scale = _standardise([r for rows, _ in groups for r in rows])
    data = [
        ([[(v - m) / d for v, m, d in zip(r, mean, scale, strict=True)] for r in rows], right)
        for rows, right in groups
    ]
    w = [0.0] * dims
    opt = _Adam(dims)
    for _ in range(steps):
        grad = [l2 * x for x in w]
        for rows, right in data:
            s = [sum(a * b for a, b in zip(w, r, strict=True)) for r in rows]
            top = max(s)
            e = [math.exp(x - top) for x in s]
            z = sum(e)
            zr = sum(e[i] for i in right)
            for i, r in enumerate(rows):
                coef = e[i] / z - (e[i] / zr if i in right else 0.0)
                if coef:
                    for j in range(dims):
                        grad[j] += coef * r[j] / len(data)
        opt.step(w, grad)
    return Linear(tuple(w), mean, scale)


def train_abstainer(
    rows: Sequence[Sequence[float]], labels: Sequence[bool], *, l2: float = 0.01, steps: int = 300
) -> Linear:
    """Logistic regression: probability that nothing fits (label True)."""
    dims = len(rows[0])
    mean, scale = _standardise(rows)
    data = [[(v - m) / d for v, m, d in zip(r, mean, scale, strict=True)] for r in rows]
    w = [0.0] * (dims + 1)  # the last is the bias
    opt = _Adam(dims + 1)
    n = len(data)
    for _ in range(steps):
        grad = [l2 * x for x in w[:dims]] + [0.0]
        for r, y in zip(data, labels, strict=True):
            p = _sigmoid(sum(a * b for a, b in zip(w, r, strict=False)) + w[dims])
            g = (p - (1.0 if y else 0.0)) / n
            for j in range(dims):
                grad[j] += g * r[j]
            grad[dims] += g
        opt.step(w, grad)
    return Linear(tuple(w[:dims]), mean, scale, w[dims])


#: What the abstain threshold trades: a wrongly empty answer costs this many times a wrongly
#: filled one (as in ``metrics.objective``: false-rejection x 2 against none-rejection / 2).
FALSE_REJECTION_COST = 4.0


def train(index: Index, samples: Sequence[Sample]) -> Model:
    """Fit the ranking model, then the abstain classifier on the re-ordered candidates, then
    the threshold that best trades answered none-queries against rejected answerable ones."""
    ranker = train_ranker(samples)
    rows, labels = [], []
    for s in samples:
        if s.candidates is None:
            continue
        c = s.candidates
        scores = [ranker(r) for r in c.rows]
        order = sorted(range(len(c.docs)), key=lambda i: (-scores[i], i))
        rows.append(abstain_row(index, c, order, scores))
        labels.append(s.none)
    if not rows or all(labels) or not any(labels):
        return Model(
            ranker,
            Linear(
                (0.0,) * len(ABSTAIN_FEATURES),
                (0.0,) * len(ABSTAIN_FEATURES),
                (1.0,) * len(ABSTAIN_FEATURES),
                -10.0,
            ),
            0.5,
        )
    abstainer = train_abstainer(rows, labels)
    probs = [_sigmoid(abstainer(r)) for r in rows]
    return Model(ranker, abstainer, _threshold(probs, labels, len(samples)))


def _threshold(probs: Sequence[float], labels: Sequence[bool], total: int) -> float:
    """The cut on P(nothing fits) that best trades none-queries answered against answerable
    ones rejected (the latter weighted ``FALSE_REJECTION_COST``)."""
    nones = max(1, sum(labels))
    answerable = max(1, len(labels) - sum(labels))
    best, best_gain = 1.01, 0.0
    for cut in sorted(set(probs)):
        caught = sum(1 for p, y in zip(probs, labels, strict=True) if y and p >= cut)
        lost = sum(1 for p, y in zip(probs, labels, strict=True) if not y and p >= cut)
        gain = caught / nones - FALSE_REJECTION_COST * lost / answerable
        if gain > best_gain:
            best, best_gain = cut, gain
    return best


# --- cross-validation --------------------------------------------------------------------------

Keyer = Callable[[int], str]


def answers(index: Index, model: Model, s: Sample, *, limit: int = 10) -> list[str]:
    """The keys ``model`` returns for a labelled sample's candidates."""
    c = s.candidates
    if c is None:
        return []
    order, none = decide(index, model, c)
    if none >= model.threshold:
        return []
    return [index.keys[c.docs[i]] for i in order[:limit]]


def cross_validate(
    index: Index, cases: Sequence[Case], samples: Sequence[Sample], k: int = 10
) -> Report:
    """Each of ``k`` folds answered by a model trained on the other folds only."""
    held = []
    for fold in stratified_folds(cases, k):
        inside = set(fold)
        model = train(index, [s for i, s in enumerate(samples) if i not in inside])
        held.extend(outcome(cases[i], answers(index, model, samples[i])) for i in fold)
    return summarise(held)
