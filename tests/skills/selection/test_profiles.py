from __future__ import annotations

from pathlib import Path

import pytest

from lemon_skills.errors import ConfigError
from lemon_skills.skills.selection.profiles import Profile, keep, merge, parse, select

PATH = Path("/p/skills.json")


def test_deny_wins_over_allow_and_preload_is_admitted():
    p = Profile(agent="a", allow=("git-*",), deny=("git-push",), preload=("style",))
    assert p.admits("git-log")
    assert not p.admits("git-push")
    assert p.admits("style") and p.preloads("style")
    assert not p.admits("pdf")


def test_a_denied_preload_is_not_preloaded():
    assert not Profile(agent="a", deny=("style",), preload=("style",)).preloads("style")


def test_keep_filters_by_key_and_without_a_profile_keeps_everything():
    keys = ["git-log", "pdf"]
    assert keep(keys, Profile(agent="a", allow=("pdf",)), key=str) == ["pdf"]
    assert keep(keys, None) == keys


def test_parse_builds_profiles_per_agent():
    profiles = parse({"review": {"allow": ["lint-*"], "budget": 4000}}, path=PATH)
    assert profiles["review"].allow == ("lint-*",)
    assert profiles["review"].budget == 4000
    assert parse(None, path=PATH) == {}


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ([], "must be an object of agent name"),
        ({"a": []}, 'profile "a" must be an object'),
        ({"a": {"alow": []}}, "unknown field"),
        ({"a": {"budget": True}}, "budget must be a positive"),
        ({"a": {"budget": 0}}, "budget must be a positive"),
        ({"a": {"deny": "git"}}, 'profile "a".deny must be a list'),
        ({"a": {"allow": [""]}}, 'profile "a".allow must be a list'),
    ],
)
def test_malformed_profiles_are_config_errors(data, needle):
    with pytest.raises(ConfigError, match=needle):
        parse(data, path=PATH)


def test_a_project_refines_but_never_undenies():
    global_ = {"a": Profile(agent="a", allow=("x", "y"), deny=("secret",), budget=100)}
    project = {"a": Profile(agent="a", deny=("y",)), "b": Profile(agent="b")}
    merged = merge(global_, project)
    assert merged["a"].allow == ("x", "y")
    assert merged["a"].deny == ("secret", "y")
    assert merged["a"].budget == 100
    assert merged["b"] == Profile(agent="b")


def test_an_unknown_agent_is_an_error_not_a_lifted_restriction():
    with pytest.raises(ConfigError, match="no skill profile for agent 'reveiw'"):
        select({"review": Profile(agent="review")}, "reveiw")
    assert select({}, None) is None
