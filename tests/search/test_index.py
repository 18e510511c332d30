"""The index: counts per (term, document, field), weights, updates and the byte form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lemon_skills import search
from lemon_skills.search import analysis, schema, scoring
from lemon_skills.search import index as search_index

WEIGHTS = search.Weights(
    field_weight={"name": 3.0, "description": 2.0, "body": 0.1},
    field_b={"name": 0.3, "description": 0.5, "body": 0.75},
)
QUERIES = (
    "crawl a web site",
    "fire drill",
    "firecrawl",
    "deploy kubernetes",
    "merge pdf",
    "kuberntes",
    "site office plan",
    "website",
)


def _doc(key: str, description: str, body: str = "", version: int = 0) -> search.Document:
    return search.Document(
        key,
        {"name": key.replace("-", " "), "description": description, "body": body},
        names=(key,),
        stamp=(key, version),
    )


BASE = [
    _doc("firecrawl", "Crawl a website and save each web page.", "Pages are saved as markdown."),
    _doc("fire-drill", "Plan a fire drill for a site office.", "Exits, wardens and a siren."),
    _doc("kubernetes-deploy", "Deploy services to Kubernetes with Helm.", "kubectl rollout."),
    _doc("pdf", "Merge PDF files and split pages.", "Uses qpdf; keeps bookmarks."),
]


def _assert_same(got: search.Index, want: search.Index) -> None:
    """Every stored statistic and every ranking of ``got`` equals ``want``'s, bit for bit."""
    assert got.keys == want.keys and got.priority == want.priority
    assert dict(got.names) == dict(want.names)
    assert dict(got.lexicon) == dict(want.lexicon)
    assert set(got.postings) == set(want.postings)
    for term in want.postings:
        a, b = got.postings[term], want.postings[term]
        assert np.array_equal(a.docs, b.docs), term
        assert a.weights.tobytes() == b.weights.tobytes(), term
        assert np.array_equal(a.strong, b.strong), term
        assert got.idf[term] == want.idf[term] and got.plain_idf[term] == want.plain_idf[term]
    for q in QUERIES:
        assert search.rank(got, q, limit=10) == search.rank(want, q, limit=10), q


def _changes(docs: list[search.Document]) -> list[str]:
    return [d.key for d in docs]


@pytest.mark.parametrize(
    "change",
    [
        "add",
        "edit body",
        "edit description",
        "remove",
        "add and remove",
        "reorder",
        "new word",
        "split flips",
        "name compound appears",
    ],
)
def test_an_updated_index_equals_a_fresh_build(change, monkeypatch):
    docs = list(BASE)
    old = search.build_index(docs, WEIGHTS)
    if change == "add":
        docs.append(_doc("slack", "Post messages to Slack channels.", "Use the web API."))
    elif change == "edit body":
        docs[3] = _doc("pdf", BASE[3].fields["description"], "Split and merge; qpdf.", 1)
    elif change == "edit description":
        docs[1] = _doc("fire-drill", "Plan a fire drill for an office.", "Exits.", 1)
    elif change == "remove":
        del docs[0]
    elif change == "add and remove":
        del docs[2]
        docs.insert(0, _doc("site-audit", "Audit a web site for broken links.", "Crawl it."))
    elif change == "reorder":
        docs.reverse()
    elif change == "new word":  # a word no document had: the lexicon changes
        docs[2] = _doc("kubernetes-deploy", "Deploy services to Kubernetes clusters.", "", 1)
    elif change == "split flips":
        # "website" in more documents than "web": it stops counting as web + site everywhere.
        docs += [_doc(f"site-{i}", "Save a website.", "Pages.") for i in range(3)]
    elif change == "name compound appears":  # "fire" leaves the lexicon: no more fire + crawl
        docs[1] = _doc("fire-drill", "Plan a drill for a site office.", "Exits.", 1)
        docs[1] = search.Document(
            "drill", {"name": "drill", "description": "Plan a drill for an office."}, ("drill",)
        )
    fresh = search.build_index(docs, WEIGHTS)
    seen: list[str] = []
    real = analysis.analyse_document
    monkeypatch.setattr(analysis, "analyse_document", lambda d, w: seen.append(d.key) or real(d, w))
    updated = search_index.update_index(old, docs)
    _assert_same(updated, fresh)
    # Only documents not in the old index (by stamp) were tokenised again.
    assert seen == [d.key for d in docs if d not in BASE]


def test_updating_twice_and_through_the_byte_form_still_equals_a_fresh_build():
    docs = list(BASE)
    index = search.loads(search.dumps(search.build_index(docs, WEIGHTS)), WEIGHTS)
    docs.append(_doc("web-scraper", "Scrape a website into tables.", "Crawl and parse."))
    index = search_index.update_index(index, docs)
    index = search.loads(search.dumps(index), WEIGHTS)
    del docs[1]
    index = search_index.update_index(index, docs)
    _assert_same(index, search.build_index(docs, WEIGHTS))


def test_weights_are_bm25f_over_the_fields():
    # The definition written out for one term: each field's count, weighted and normalised by
    # its length against the mean, summed, then saturated once.
    docs = [
        search.Document("a", {"name": "merge", "description": "merge merge files", "body": ""}),
        search.Document("b", {"name": "split", "description": "split files", "body": "merge"}),
    ]
    index = search.build_index(docs, WEIGHTS)
    mean = {"name": 1.0, "description": 2.5, "body": 0.5}
    lengths = [{"name": 1, "description": 3, "body": 0}, {"name": 1, "description": 2, "body": 1}]
    counts = [{"name": 1, "description": 2, "body": 0}, {"name": 0, "description": 0, "body": 1}]
    k1 = WEIGHTS.k1
    for d in (0, 1):
        tilde = sum(
            counts[d][f]
            * WEIGHTS.field_weight[f]
            / (1 - WEIGHTS.field_b[f] + WEIGHTS.field_b[f] * lengths[d][f] / mean[f])
            for f in ("body", "name", "description")
        )
        assert index.postings["merg"].weight(d) == pytest.approx(tilde * (k1 + 1) / (k1 + tilde))
    # Held by both, but only "a" states it in a short field: "b"'s body mention counts 0.35.
    assert index.idf["merg"] == schema.idf(2, 1 + WEIGHTS.body_df)
    assert index.plain_idf["merg"] == schema.idf(2, 2)
    assert list(index.postings["merg"].strong) == [True, False]


def test_a_term_no_document_holds_any_more_is_gone():
    docs = [_doc("a", "zorblax files"), _doc("b", "other files")]
    index = search_index.update_index(search.build_index(docs, WEIGHTS), docs[1:])
    assert "zorblax" not in index.postings and "zorblax" not in index.idf
    assert scoring.rank(index, "zorblax") == []


def test_byte_form_refuses_other_bytes_and_other_build_weights():
    data = search.dumps(search.build_index(BASE, WEIGHTS))
    with pytest.raises(ValueError):
        search.loads(b"LEMONIDX" + bytes(40), WEIGHTS)
    with pytest.raises(ValueError):
        search.loads(data, search.Weights(field_weight=WEIGHTS.field_weight, field_b={}, k1=2.0))
    # Weights that only change ranking, not the counts, read the same bytes.
    lenient = search.Weights(
        field_weight=WEIGHTS.field_weight, field_b=WEIGHTS.field_b, min_score=0.1
    )
    assert search.loads(data, lenient).weights.min_score == 0.1


def test_idf_is_smoothed_by_the_background_corpus():
    assert schema.idf(0, 0) == math.log(1 + (schema.BACKGROUND + 0.5) / 0.5)
    assert schema.idf(10, 1) > schema.idf(10, 5)
