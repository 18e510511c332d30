"""YAML is parsed with a safe loader: frontmatter can never construct Python objects."""

from __future__ import annotations

import pytest

from lemon_skills import _yaml


def test_plain_documents_parse():
    assert _yaml.safe_load("name: demo\ntags: [a, b]\n") == {"name": "demo", "tags": ["a", "b"]}


@pytest.mark.parametrize(
    "doc",
    [
        "x: !!python/object/apply:os.system ['echo pwned']",
        "x: !!python/name:os.system",
        "x: !!python/object:collections.OrderedDict {}",
    ],
)
def test_python_tags_are_refused(doc):
    with pytest.raises(_yaml.YAMLError):
        _yaml.safe_load(doc)


def test_dump_keeps_key_order_and_unicode():
    text = _yaml.safe_dump({"name": "zürich", "a": 1})
    assert text == "name: zürich\na: 1\n"
    assert _yaml.safe_load(text) == {"name": "zürich", "a": 1}
