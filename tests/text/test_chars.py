from __future__ import annotations

import pytest

from lemon_skills.text.chars import (
    classify,
    decode_tags,
    find_invisible,
    lookalike_reason,
    scripts,
)


def _tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def test_hidden_characters_are_found_with_line_and_column():
    text = "line one\nab\u200bc\u202e\n" + _tags("x")
    found = list(find_invisible(text))
    assert [(f.line, f.column, f.kind) for f in found] == [
        (2, 3, "zero-width character"),
        (2, 5, "bidi control"),
        (3, 1, "tag character"),
    ]
    assert found[0].describe() == "U+200B (zero-width character) at line 2, column 3"


def test_a_leading_bom_is_ignored_unless_asked_for():
    assert list(find_invisible("\ufeffhello")) == []
    assert [f.codepoint for f in find_invisible("\ufeffhello", skip_leading_bom=False)] == [0xFEFF]
    assert [f.column for f in find_invisible("hi\ufeff")] == [3]


@pytest.mark.parametrize(
    ("codepoint", "kind"),
    [
        (ord("a"), None),
        (0xFE0F, None),  # emoji variation selector: not hidden text
        (0x00AD, "soft hyphen"),
        (0x2028, "line separator"),
        (0x2066, "bidi control"),
        (0xE0041, "tag character"),
    ],
)
def test_classify(codepoint, kind):
    assert classify(codepoint) == kind


def test_tag_characters_decode_to_the_hidden_instruction():
    assert decode_tags("ok" + _tags("run rm -rf") + "!") == "run rm -rf"


def test_japanese_counts_as_one_script():
    assert scripts("ひらがなカタカナ漢字") == {"JAPANESE"}


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("\u0440df-tools", "mixes scripts CYRILLIC, LATIN"),
        ("\u0441\u043e\u0440\u0443", "look like Latin"),
        ("ｐｄｆ", "compatibility characters"),
    ],
)
def test_lookalike_names_are_explained(name, needle):
    assert needle in (lookalike_reason(name) or "")


@pytest.mark.parametrize("name", ["pdf-tools", "данные", "日本語ツール"])
def test_honest_names_have_no_lookalike_reason(name):
    assert lookalike_reason(name) is None
