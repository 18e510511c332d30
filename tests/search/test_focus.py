"""An index focused on one query ranks it as the full index does."""

from __future__ import annotations

import itertools
import random
import string

import pytest

from lemon_skills import search
from lemon_skills.search import codec, focus, tokens
from lemon_skills.search import index as search_index

WEIGHTS = search.Weights(
    field_weight={"name": 3.0, "description": 2.0, "headings": 1.0, "body": 0.1},
    field_b={"name": 0.3, "description": 0.5, "headings": 0.6, "body": 0.75},
)
DOCS = [
    ("firecrawl", "Crawl a website and save each web page.", "Fire up the crawler. Pages saved."),
    (
        "fire-drill",
        "Plan a fire drill for a site office.",
        "Exits, wardens and a siren; crawl out.",
    ),
    ("web-crawl-tools", "Tools for web crawling at scale.", "A firecrawl alternative for sites."),
    (
        "kubernetes-deploy",
        "Deploy services to Kubernetes with Helm.",
        "kubectl rollout; deploying.",
    ),
    ("pdf", "Merge PDF files and split pages.", "Uses qpdf; merges keep bookmarks. Merge pdf."),
    ("pdf-forms", "Fill PDF forms.", "Merging is elsewhere; forms, fields and PDF/A."),
    ("happy-path", "Happiness checks for the happy path.", "Happily, happier tests; reliability."),
    ("reliable-jobs", "Reliable background jobs.", "Reliability, reliably, relied on. Dying jobs."),
    ("sky-watch", "Watch the skies at night.", "The sky, skies and skyline; dying stars die."),
    ("cafe-menu", "Café menus and naïve pricing.", "CAFÉ, café, Cafe; naive déjà vu; ai ui 3d 42."),
    ("generalise", "Generalization of organizations.", "Generalize, generalised; organizational."),
    ("ai-agents", "AI agents that call tools.", "Agents; agentic; tool-calling; ai ai ai."),
    ("empty", "", ""),
]
QUERIES = (
    "crawl a web site",
    "firecrawl",
    "fire crawl",
    "fire drill for the office",
    "deploy kubernetes",
    "kuberntes deploy",
    "merge pdf",
    "merging two pdfs",
    "mergepdf",
    "happy tests",
    "reliability of jobs",
    "dying skies",
    "cafe naive",
    "café",
    "organization generalization",
    "ai agents",
    "3d 42",
    "website",
    "weather in paris",
    "",
)


def _docs() -> list[search.Document]:
    out = []
    for i, (key, description, body) in enumerate(DOCS):
        headings = "\n".join(w.capitalize() for w in key.split("-"))
        fields = {
            "name": key.replace("-", " "),
            "description": description,
            "headings": headings,
            "body": (body + " ") * (1 + i % 3),
        }
        out.append(search.Document(key, fields, names=(key,), priority=i % 2))
    return out


def _body_lengths(full: search.Index) -> dict[str, list[int]]:
    assert full.store is not None
    return {"body": full.store.lengths[:, WEIGHTS.fields.index("body")].tolist()}


@pytest.mark.parametrize("query", QUERIES)
def test_given_the_true_body_lengths_it_ranks_as_the_full_index(query: str) -> None:
    docs = _docs()
    full = search.build_index(docs, WEIGHTS)
    focused = focus.focused_index(docs, WEIGHTS, query, long_lengths=_body_lengths(full))
    # A match carries its score and every part of it.
    assert search.rank(focused, query, limit=20) == search.rank(full, query, limit=20)


def test_with_estimated_lengths_its_counts_and_frequencies_are_still_exact() -> None:
    docs = _docs()
    full = search.build_index(docs, WEIGHTS)
    for query in QUERIES:
        focused = focus.focused_index(docs, WEIGHTS, query)
        for qt in search.scoring.analyse(full, query).terms:
            assert focused.plain_idf[qt.term] == full.plain_idf[qt.term]
            assert list(focused.postings[qt.term].docs) == list(full.postings[qt.term].docs)


def test_a_focused_index_can_be_neither_updated_nor_stored() -> None:
    focused = focus.focused_index(_docs(), WEIGHTS, "merge pdf")
    with pytest.raises(ValueError, match="cannot be updated"):
        search_index.update_index(focused, _docs())
    with pytest.raises(ValueError):
        codec.dumps(focused)


#: Words whose Snowball stem rewrites their last letters, or is irregular.
TRICKY = [
    "dying",
    "lying",
    "tying",
    "dies",
    "skies",
    "sky",
    "skis",
    "happy",
    "happiness",
    "happily",
    "reliability",
    "reliable",
    "reliably",
    "hoping",
    "hopping",
    "hoped",
    "generalization",
    "generalise",
    "relational",
    "conditional",
    "sensitivity",
    "fluency",
    "possibly",
    "capability",
    "ability",
    "analogy",
    "agreed",
    "agreeing",
    "news",
    "early",
    "only",
    "gently",
    "ugly",
    "idly",
    "singly",
    "organization",
    "electricity",
    "goodness",
    "hopefulness",
    "cried",
    "crying",
    "flies",
    "flying",
    "studies",
    "studying",
    "conflated",
    "creating",
    "created",
    "duplicate",
    "duplication",
    "activities",
    "activity",
    "mobility",
    "ably",
]


def test_every_word_starts_with_a_surface_prefix_of_its_stem() -> None:
    rng = random.Random(7)
    vocabulary = set(TRICKY)
    for _, description, body in DOCS:
        vocabulary.update(tokens.words(f"{description} {body}"))
    vocabulary.update(
        "".join(rng.choices("aeiouybcdlnrst", k=rng.randint(3, 12))) for _ in range(5000)
    )
    for word in vocabulary:
        prefixes = focus.surface_prefixes(tokens.stem(word))
        assert any(word.startswith(p) for p in prefixes), (word, tokens.stem(word), prefixes)


def test_non_content_is_exactly_what_is_content_refuses() -> None:
    alphabet = string.ascii_lowercase + string.digits
    words = {"".join(p) for n in (1, 2, 3) for p in itertools.product(alphabet, repeat=n)}
    words |= {w for w in tokens.STOP_WORDS if w.isalnum()}
    for w in words:
        assert (w in focus.NON_CONTENT) == (not tokens.is_content(w)), w


def test_occurrences_count_as_term_counts_does() -> None:
    rng = random.Random(11)
    pieces = [
        *TRICKY,
        "Café",
        "CRAWL",
        "crawl-ing",
        "x2",
        "déjà",
        "—",
        "“quoted”",
        "a",
        "the",
        "42",
    ]
    for _ in range(300):
        text = "".join(
            rng.choice(pieces) + rng.choice([" ", ", ", "\n", "", "/", "é"]) for _ in range(30)
        )
        want = tokens.term_counts(text)
        terms = set(rng.sample(sorted(want), min(5, len(want)))) | {"nowher"}
        assert tokens.spaced(text).split() == tokens.words(text)
        got = focus.Occurrences(terms)(text)
        assert got == {t: n for t, n in want.items() if t in terms}, text
