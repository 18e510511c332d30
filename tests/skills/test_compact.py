from __future__ import annotations

import json

import pytest

from lemon_skills.skills.format import compact
from lemon_skills.skills.format.manifest import parse_skill

FULL = """---
name: pdf
description: Work with PDFs.
version: 1.2.0
tags: [pdf, docs]
platforms: [linux]
requires:
  bins: [qpdf]
disable-model-invocation: true
x-owner: team
---
body
"""


def _manifest(text):
    return parse_skill(text).manifest


def test_a_plain_skill_compacts_to_nothing():
    m = _manifest("---\nname: pdf\ndescription: Work with PDFs.\n---\nbody\n")
    assert compact.compact(m, name="pdf", description="Work with PDFs.") == {}
    assert compact.listing({}) == (None, [], [], None, ["any"])


def test_compact_form_is_json_safe_valid_and_expands_back(tmp_path):
    skill_file = tmp_path / "SKILL.md"
    skill_file.write_text(FULL, "utf-8")
    m = _manifest(FULL)
    fields = json.loads(json.dumps(compact.compact(m, name="pdf", description="Work with PDFs.")))
    assert compact.is_valid(fields)
    assert compact.listing(fields) == ("1.2.0", ["pdf", "docs"], [], None, ["linux"])
    back = compact.expand(fields, name="pdf", description="Work with PDFs.", skill_file=skill_file)
    assert (back.name, back.version, back.tags, back.platforms) == (
        m.name,
        m.version,
        m.tags,
        m.platforms,
    )
    assert back.requires == m.requires
    assert back.disable_model_invocation is True
    assert dict(back.raw) == dict(m.raw)


def test_raw_frontmatter_of_a_vanished_file_is_empty_not_an_error(tmp_path):
    back = compact.expand({}, name="a", description="d", skill_file=tmp_path / "gone" / "SKILL.md")
    assert dict(back.raw) == {}
    assert back.name == "a"


@pytest.mark.parametrize(
    "fields",
    [
        [],
        {"tags": "pdf"},
        {"tags": [1]},
        {"requires": {"bins": "qpdf"}},
        {"requires": {"nonsense": []}},
        {"attach": "yes"},
        {"format": "xml"},
        {"unknown": 1},
        {"description": 3},
    ],
)
def test_a_damaged_cache_entry_is_not_valid(fields):
    assert not compact.is_valid(fields)


def test_lazy_map_loads_once_on_first_use():
    calls = []

    def load():
        calls.append(1)
        return {"a": 1}

    lazy = compact.LazyMap(load)
    assert calls == []
    assert dict(lazy) == {"a": 1}
    assert len(lazy) == 1 and lazy["a"] == 1
    assert calls == [1]
