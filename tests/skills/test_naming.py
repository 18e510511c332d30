from __future__ import annotations

import pytest

from lemon_skills.errors import InstallError
from lemon_skills.skills.format.naming import MAX_KEY, skill_key, unsafe_reason


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("PDF Tools", "pdf-tools"),
        ("pdf_tools", "pdf-tools"),
        ("  spaced  out  ", "spaced-out"),
        ("a -- b", "a-b"),
        ("ＦＵＬＬ width", "full-width"),
        ("already-a-key", "already-a-key"),
    ],
)
def test_names_fold_into_the_agent_skills_charset(name, key):
    assert skill_key(name) == key


def test_long_names_are_cut_without_a_trailing_hyphen():
    key = skill_key("a" * (MAX_KEY - 1) + " tail")
    assert len(key) <= MAX_KEY
    assert not key.endswith("-")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("../evil", "separator"),
        ("a\\b", "separator"),
        ("..", "'..'"),
        (".hidden", "dot"),
        ("zero\u200bwidth", "invisible"),
        ("tab\there", "control"),
    ],
)
def test_path_like_names_are_refused_with_a_reason(name, reason):
    assert reason in (unsafe_reason(name) or "")
    with pytest.raises(InstallError, match="refusing skill name"):
        skill_key(name)


def test_ordinary_names_have_no_unsafe_reason():
    assert unsafe_reason("PDF Tools") is None


def test_a_name_without_letters_or_digits_is_refused():
    with pytest.raises(InstallError, match="no letters or digits"):
        skill_key("---")
