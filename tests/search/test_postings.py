"""Posting rows: per-field counts sorted by term and document, patched in place of rebuilt."""

from __future__ import annotations

from collections import Counter

import numpy as np

from lemon_skills.search import postings


def _rows(docs: list[list[dict[str, int]]], ids: dict[str, int]) -> postings.Rows:
    builder = postings.Builder(2, ids)
    for n, fields in enumerate(docs):
        for j, counts in enumerate(fields):
            builder.add(n, j, counts)
    return builder.rows()


def _table(rows: postings.Rows, ids: dict[str, int]) -> set[tuple[str, int, tuple[int, ...]]]:
    names = {i: t for t, i in ids.items()}
    return {
        (names[t], d, tuple(tf))
        for t, d, tf in zip(rows.term.tolist(), rows.doc.tolist(), rows.tf.tolist(), strict=True)
    }


DOCS = [
    [{"pdf": 1}, {"merg": 2, "pdf": 3}],
    [{"deploy": 1}, {"kubernet": 1}],
    [{"pdf": 1}, {"split": 4}],
]


def test_rows_hold_each_fields_count_sorted_by_term_then_document():
    ids: dict[str, int] = {}
    rows = _rows(DOCS, ids)
    assert ("pdf", 0, (1, 3)) in _table(rows, ids) and ("pdf", 2, (1, 0)) in _table(rows, ids)
    key = rows.term.astype(np.int64) * 10 + rows.doc
    assert list(key) == sorted(key)
    lo, hi = rows.span(ids["pdf"])
    assert rows.doc[lo:hi].tolist() == [0, 2]
    assert rows.span(len(ids) + 5) == (0, 0)
    terms = sorted(ids, key=ids.__getitem__)
    assert rows.doc_counts(0, 1, terms) == Counter({"merg": 2, "pdf": 3})


def test_patch_equals_rows_built_for_the_new_documents():
    ids: dict[str, int] = {}
    rows = _rows(DOCS, ids)
    # Document 1 removed, document 0 edited (re-added), a new document at the end.
    new_docs = [[{"pdf": 2}, {"merg": 1}], DOCS[2], [{"deploy": 1}, {"helm": 2}]]
    renumber = np.asarray([-1, -1, 1], dtype=np.int32)
    builder = postings.Builder(2, ids)
    for n in (0, 2):
        for j, counts in enumerate(new_docs[n]):
            builder.add(n, j, counts)
    patched = postings.patch(rows, renumber, builder.rows())
    fresh_ids: dict[str, int] = {}
    fresh = _rows(new_docs, fresh_ids)
    assert _table(patched, ids) == _table(fresh, fresh_ids)
    key = patched.term.astype(np.int64) * 10 + patched.doc
    assert list(key) == sorted(key)


def test_weights_are_saturated_bm25f():
    lengths = np.asarray([[1, 4], [2, 2]], dtype=np.int32)
    norm, means = postings.norms(lengths, [3.0, 1.0], [0.5, 0.75])
    assert means == [1.5, 3.0]
    assert norm[0, 0] == 3.0 / (1 - 0.5 + 0.5 * 1 / 1.5)
    tf = np.asarray([[1, 2], [0, 1]], dtype=np.uint16)
    w = postings.weigh(tf, np.asarray([0, 1], dtype=np.int32), norm, [1, 0], 3.0)
    tilde = 2 * norm[0, 1] + 1 * norm[0, 0]
    assert w[0] == tilde * 4.0 / (3.0 + tilde)


def test_patch_splices_a_few_changed_documents_into_many():
    # Enough rows that the changed ones are placed one by one rather than sorted in.
    docs = [[{f"w{i % 7}": 1, f"v{i % 5}": 2}, {f"u{i % 3}": i % 4 + 1}] for i in range(400)]
    ids: dict[str, int] = {}
    rows = _rows(docs, ids)
    new_docs = [d for i, d in enumerate(docs) if i != 10]  # one removed...
    new_docs[199] = [{"w1": 3, "fresh": 1}, {}]  # ...one edited (old 200)...
    new_docs.insert(300, [{"v2": 1}, {"u0": 2}])  # ...and one added
    renumber = np.asarray([i - (i > 10) + (i > 300) for i in range(400)], dtype=np.int32)
    renumber[10] = renumber[200] = -1
    builder = postings.Builder(2, ids)
    for n in (199, 300):
        for j, counts in enumerate(new_docs[n]):
            builder.add(n, j, counts)
    patched = postings.patch(rows, renumber, builder.rows())
    fresh_ids: dict[str, int] = {}
    assert _table(patched, ids) == _table(_rows(new_docs, fresh_ids), fresh_ids)
    key = patched.term.astype(np.int64) * 1000 + patched.doc
    assert list(key) == sorted(key)
