"""The index: counts per (term, document, field), weights, updates and the byte form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lemon_skills import search
from lemon_skills.search import analysis, codec, postings, schema, scoring
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
@pytest.mark.parametrize("rows", ["overlay", "plain"])
def test_an_updated_index_equals_a_fresh_build(change, rows, monkeypatch):
    # An edit leaves the old rows in place and reads them through an overlay, until the
    # overlay outgrows its share of them and is merged into plain rows: both rank the same.
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 0 if rows == "overlay" else 10**9)
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
    overlaid = rows == "overlay" and change != "reorder"  # a reorder is always merged
    assert isinstance(updated.store.rows, postings.Overlay) == overlaid
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


def test_an_index_updated_again_and_again_in_place_equals_a_fresh_build(monkeypatch):
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 0)  # every update an overlay of the first
    docs = list(BASE)
    index = search.build_index(docs, WEIGHTS)
    docs.append(_doc("web-scraper", "Scrape a website into tables.", "Crawl and parse."))
    index = search_index.update_index(index, docs)
    docs[0] = _doc("firecrawl", "Crawl a website to markdown.", "Each page saved.", 1)
    del docs[2]
    docs.insert(1, _doc("slack", "Post messages to Slack channels.", "Use the web API."))
    index = search_index.update_index(index, docs)
    assert isinstance(index.store.rows, postings.Overlay)
    _assert_same(index, search.build_index(docs, WEIGHTS))
    for version in range(2, 12):  # more edits than remaps are stacked before a copy
        docs[2] = _doc("fire-drill", f"Plan fire drill number {version}.", "Exits.", version)
        index = search_index.update_index(index, docs)
    _assert_same(index, search.build_index(docs, WEIGHTS))


def _delta_round_trip(old: search.Index, docs: list[search.Document]) -> search.Index:
    """``docs`` updated from ``old`` as read from bytes, stored as a delta of those bytes and
    read back over them."""
    base = search.dumps(old)
    updated = search_index.update_index(search.loads(base, WEIGHTS), docs)
    delta = b"".join(codec.dump_chunks(updated, base_tag="v1"))
    assert len(delta) < len(base)  # the rows of unchanged documents stay in the base
    return search.loads(delta, WEIGHTS, base=base, base_tag="v1")


@pytest.mark.parametrize("change", ["edit", "add and remove", "add first"])
def test_a_delta_read_over_its_base_equals_a_fresh_build(change, monkeypatch):
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 0)
    docs = [*BASE, *(_doc(f"tool-{i}", f"Tool number {i} for files.") for i in range(8))]
    old = search.build_index(docs, WEIGHTS)
    if change == "edit":
        docs[3] = _doc("pdf", "Merge PDF files, split pages and crawl links.", "qpdf.", 1)
    elif change == "add and remove":
        del docs[1]
        docs.insert(0, _doc("site-audit", "Audit a web site for broken links.", "Crawl it."))
    else:
        docs.insert(0, _doc("audit", "Audit a web site for broken links.", "Crawl it."))
    index = _delta_round_trip(old, docs)
    _assert_same(index, search.build_index(docs, WEIGHTS))
    # And it updates again like any index.
    docs.append(_doc("slack", "Post messages to Slack channels.", "Use the web API."))
    _assert_same(search_index.update_index(index, docs), search.build_index(docs, WEIGHTS))


def test_an_update_too_large_for_a_delta_is_merged_as_it_is_written(monkeypatch):
    monkeypatch.setattr(postings, "CHUNK_ROWS", 5)  # many runs, each a few terms
    docs = [*BASE, *(_doc(f"tool-{i}", f"Tool number {i} for files.") for i in range(8))]
    base = search.dumps(search.build_index(docs, WEIGHTS))
    old = search.loads(base, WEIGHTS)
    docs[3] = _doc("pdf", "Merge PDF files, split pages and crawl links.", "qpdf.", 1)
    del docs[6]
    docs.append(_doc("slack", "Post messages to Slack channels.", "Use the web API."))
    updated = search_index.update_index(old, docs, merge=False)
    assert isinstance(updated.store.rows, postings.Overlay) and codec.needs_merge(updated)
    runs: list[int] = []
    data = b"".join(codec.dump_chunks(updated, done=lambda: runs.append(1)))
    assert len(runs) > 3
    _assert_same(search.loads(data, WEIGHTS), search.build_index(docs, WEIGHTS))
    # Reading never merges: a delta, however large, is read over its base in place.
    delta = b"".join(codec.dump_chunks(updated, base_tag="v1"))
    reread = search.loads(delta, WEIGHTS, base=base, base_tag="v1")
    assert isinstance(reread.store.rows, postings.Overlay)
    _assert_same(reread, search.build_index(docs, WEIGHTS))


def test_a_delta_is_refused_without_its_base_or_over_another(monkeypatch):
    monkeypatch.setattr(postings, "OVERLAY_SHARE", 0)
    docs = list(BASE)
    base = search.dumps(search.build_index(docs, WEIGHTS))
    docs[0] = _doc("firecrawl", "Crawl a website to markdown.", "Each page saved.", 1)
    delta = b"".join(
        codec.dump_chunks(
            search_index.update_index(search.loads(base, WEIGHTS), docs), base_tag="v1"
        )
    )
    with pytest.raises(ValueError):
        search.loads(delta, WEIGHTS)
    with pytest.raises(ValueError):
        search.loads(delta, WEIGHTS, base=base, base_tag="v2")
    with pytest.raises(ValueError):  # a delta is no base
        search.loads(delta, WEIGHTS, base=delta, base_tag="v1")
    with pytest.raises(ValueError):  # only an updated index has a delta
        codec.dump_chunks(search.build_index(docs, WEIGHTS), base_tag="v1")


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
