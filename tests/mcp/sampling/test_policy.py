from __future__ import annotations

import pytest

from lemon_skills.mcp.sampling.policy import positive_int, server_slug, validate_policy


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"mode": "deny"},
        {"mode": "model", "max_tokens": 200, "allowed_models": ["a", "b"]},
        {"mode": "reviewed_model", "reviewer": "ops_approval", "approval_timeout_ms": 5000},
        {"mode": "reviewed_model", "reviewer": "approval", "approval_context": {"why": "x"}},
        {"maxTokens": 10, "reviewer": print, "delegate": print},
    ],
)
def test_valid_policies_have_no_problems(raw):
    assert validate_policy(raw) == []


def test_every_problem_is_reported_with_its_key():
    problems = validate_policy(
        {
            "mode": "always",
            "reviewer": "bob",
            "max_tokens": 0,
            "allowed_models": "gpt",
            "approval_timeout_ms": -1,
            "delegate": "nope",
            "approval_context": [],
        }
    )
    keys = [p.split(" ")[0] for p in problems]
    assert keys == [
        "sampling.mode",
        "sampling.reviewer",
        "sampling.max_tokens",
        "sampling.allowed_models",
        "sampling.approval_timeout_ms",
        "sampling.delegate",
        "sampling.approval_context",
    ]


def test_camel_case_max_tokens_is_validated_too():
    assert validate_policy({"maxTokens": "many"}) == [
        "sampling.max_tokens must be a positive integer"
    ]


def test_a_non_object_is_one_problem():
    assert validate_policy("model") == ["sampling must be an object"]


@pytest.mark.parametrize(
    ("value", "ok"), [(1, True), (0, False), (-3, False), (True, False), (1.0, False)]
)
def test_positive_int_refuses_bools_floats_and_non_positive(value, ok):
    assert positive_int(value) is ok


@pytest.mark.parametrize(
    ("name", "slug"), [("GitHub Tools", "github_tools"), ("a--b", "a_b"), ("!!!", "server")]
)
def test_server_slug_is_lowercase_underscored_and_never_empty(name, slug):
    assert server_slug(name) == slug
