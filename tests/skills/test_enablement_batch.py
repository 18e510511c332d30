"""Disabling and enabling many skills in one skills.json write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.skills.catalog.enablement import set_disabled, set_disabled_many, skills_json_path


def disabled(path: Path) -> list[str]:
    return list(json.loads(path.read_text(encoding="utf-8"))["disabled"])


def test_disable_many_reports_only_the_keys_it_changed(agent_dir: Path) -> None:
    path = skills_json_path("global")
    set_disabled(path, "b", True)
    assert set_disabled_many(path, ["c", "a", "b"], True) == ["a", "c"]
    assert disabled(path) == ["a", "b", "c"]
    assert set_disabled_many(path, ["a", "zzz"], False) == ["a"]
    assert disabled(path) == ["b", "c"]


def test_no_keys_writes_nothing(agent_dir: Path) -> None:
    path = skills_json_path("global")
    assert set_disabled_many(path, [], True) == []
    assert not path.exists()


def test_corrupt_file_is_left_untouched(agent_dir: Path) -> None:
    path = skills_json_path("global")
    path.parent.mkdir(parents=True)
    path.write_text('{"disabled": "x"}', encoding="utf-8")
    with pytest.raises(ConfigError, match="disabled"):
        set_disabled_many(path, ["a"], True)
    assert path.read_text(encoding="utf-8") == '{"disabled": "x"}'
