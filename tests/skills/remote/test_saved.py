"""Saved listings: kept as the server sent them, used only while intact and young enough, and
at most one background refresh of them at a time."""

from __future__ import annotations

import json

from lemon_skills.skills.remote import saved
from lemon_skills.skills.remote.model import RemoteFile

DIGEST = "sha256:" + "a" * 64
SKILL = saved.SavedSkill(
    "skill://pdf/SKILL.md",
    {"name": "pdf", "description": "Fill PDF forms."},
    (RemoteFile("skill://pdf/SKILL.md", DIGEST, 12),),
)


def test_a_listing_is_read_back_as_it_was_saved_with_the_servers_lifetime():
    key = saved.key_of("srv", "0123")
    saved.save(key, [SKILL], ["one problem"], ttl_ms=30_000, scope="public", now=1000.0)
    found = saved.load(key)
    assert found is not None
    assert found.skills == (SKILL,) and found.problems == ("one problem",)
    assert found.scope == "public"
    assert found.fresh(1029.0) and not found.fresh(1031.0)
    assert found.usable(1031.0) and not found.usable(1000.0 + saved.MAX_AGE_S)
    assert not found.fresh(999.0)  # saved "in the future": the clock moved back


def test_no_hint_is_the_default_lifetime_and_a_huge_one_is_capped():
    key = saved.key_of("srv", "0123")
    saved.save(key, [SKILL], [], ttl_ms=None, scope=None, now=0.0)
    assert saved.load(key).ttl_s == saved.DEFAULT_TTL_S  # type: ignore[union-attr]
    saved.save(key, [SKILL], [], ttl_ms=10**12, scope="private", now=0.0)
    assert saved.load(key).ttl_s == saved.MAX_TTL_S  # type: ignore[union-attr]


def test_an_edited_or_damaged_file_is_ignored():
    key = saved.key_of("srv", "0123")
    saved.save(key, [SKILL], [], ttl_ms=0, scope=None)
    path = saved.path_of(key)
    data = json.loads(path.read_text())
    data["body"]["skills"][0]["files"][0][1] = "sha256:" + "b" * 64
    path.write_text(json.dumps(data))
    assert saved.load(key) is None
    for damaged in ("", "{", "[]", '{"body": {}, "sha256": "x"}'):
        path.write_text(damaged)
        assert saved.load(key) is None


def test_a_file_saved_under_another_key_is_not_used_for_this_one():
    mine, other = saved.key_of("srv", "0123"), saved.key_of("srv", "4567")
    assert mine != other != saved.key_of("docs", "0123")
    saved.save(other, [SKILL], [], ttl_ms=0, scope=None)
    saved.path_of(mine).write_bytes(saved.path_of(other).read_bytes())
    assert saved.load(mine) is None


def test_one_refresh_at_a_time_until_it_is_released():
    keys = ("k1", "k2")
    assert saved.claim_refresh(keys)
    assert not saved.claim_refresh(("k2", "k1"))
    saved.release_refresh(keys)
    assert saved.claim_refresh(keys)
