"""The corpus-neutral search core on documents that are not skills."""

from __future__ import annotations

import pytest

from lemon_skills import search
from lemon_skills.search.tokens import identifier_words

WEIGHTS = search.Weights(
    field_weight={"name": 3.0, "description": 2.0, "params": 1.0, "server": 0.5},
    field_b={"name": 0.3, "description": 0.5, "params": 0.6, "server": 0.3},
    long_fields=frozenset({"server"}),
)


def _tool(name: str, description: str, params: str = "", server: str = "") -> search.Document:
    return search.Document(
        name,
        {
            "name": " ".join(identifier_words(name)),
            "description": description,
            "params": params,
            "server": server,
        },
        names=(name,),
    )


TOOLS = [
    _tool("createIssue", "Open a new issue in a repository.", "title body labels", "github"),
    _tool("list_pull_requests", "List pull requests of a repository.", "state base", "github"),
    _tool("get_weather_forecast", "Forecast temperature and rain for a city.", "city days"),
    _tool("send-message", "Post a message to a chat channel.", "channel text", "slack"),
    _tool("query_database", "Run a read-only SQL query against Postgres.", "sql limit"),
]


def _keys(index: search.Index, query: str, **kw: int) -> list[str]:
    return [m.key for m in search.rank(index, query, **kw)]


def test_any_corpus_ranks_by_its_own_fields():
    index = search.build_index(TOOLS, WEIGHTS)
    assert _keys(index, "open an issue about the crash")[0] == "createIssue"
    assert _keys(index, "rain forecast for Lisbon this week")[0] == "get_weather_forecast"
    assert _keys(index, "post to the team channel")[0] == "send-message"
    assert _keys(index, "run sql against the postgres db")[0] == "query_database"


def test_a_document_typed_by_name_comes_first_and_nothing_fits_gets_nothing():
    index = search.build_index(TOOLS, WEIGHTS)
    assert _keys(index, "list_pull_requests")[0] == "list_pull_requests"
    assert _keys(index, "bake sourdough bread") == []


def test_matches_explain_their_score_and_clear_the_bar():
    index = search.build_index(TOOLS, WEIGHTS)
    top = search.rank(index, "open a new issue", limit=1)[0]
    assert top.key == "createIssue" and index.keys[top.doc] == "createIssue"
    assert "term:issu" in top.parts and top.parts["score"] == top.score
    assert search.clears_bar(top.parts, WEIGHTS, semantic=False)


def test_priority_breaks_ties():
    same = {"name": "lint", "description": "Lint Python code."}
    docs = [search.Document("a", same), search.Document("b", same, priority=1)]
    assert _keys(search.build_index(docs, WEIGHTS), "lint python code") == ["b", "a"]


def test_byte_form_ranks_like_the_built_index():
    built = search.build_index(TOOLS, WEIGHTS)
    loaded = search.loads(search.dumps(built), WEIGHTS)
    for q in ("open an issue", "forcast rain", "createIssue", "post message"):
        assert search.rank(built, q) == search.rank(loaded, q)
    with pytest.raises(ValueError):
        search.loads(b"not an index", WEIGHTS)


def test_memo_tokenises_a_stamped_document_once():
    memo: dict[object, object] = {}
    docs = [search.Document("a", {"name": "alpha"}, stamp=("a", 1))]
    first = search.build_index(docs, WEIGHTS, memo=memo)  # type: ignore[arg-type]
    assert list(memo) == [("a", 1)]
    again = search.build_index(docs, WEIGHTS, memo=memo)  # type: ignore[arg-type]
    assert search.rank(first, "alpha") == search.rank(again, "alpha")


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("getHTTPResponse_v2", ["get", "http", "response", "v2"]),
        ("list-pull_requests", ["list", "pull", "requests"]),
        ("S3Bucket", ["s3", "bucket"]),
    ],
)
def test_identifier_words_split_camel_case_and_separators(name, words):
    assert identifier_words(name) == words
