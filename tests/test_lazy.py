"""Lazy package attributes: nothing imported until a name is used, then kept."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lemon_skills._lazy import lazy_getattr


def test_names_resolve_to_attributes_modules_or_renamed_attributes():
    namespace: dict[str, object] = {}
    getattr_ = lazy_getattr(
        "lemon_skills",
        {"dumps": "json", "jsonmod": "json:", "load_it": "json:loads"},
        namespace,
    )
    import json

    assert getattr_("dumps") is json.dumps
    assert getattr_("jsonmod") is json
    assert getattr_("load_it") is json.loads
    assert namespace["dumps"] is json.dumps  # kept: the next lookup is a plain attribute
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr_("nope")


def test_importing_lemon_skills_loads_no_submodule_until_a_name_is_used():
    code = (
        "import sys, lemon_skills;"
        "before = sorted(m for m in sys.modules if m.startswith('lemon_skills.'));"
        "lemon_skills.Entry;"
        "print(before, 'lemon_skills.skills.format.model' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ["['lemon_skills._lazy',", "'lemon_skills.context',", "'lemon_skills.version']"]
    assert out.stdout.split() == [*loaded, "True"]
