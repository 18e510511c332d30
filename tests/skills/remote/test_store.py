"""Verified remote skill files by digest, and the digest each approval is pinned to."""

from __future__ import annotations

from lemon_skills.paths import agent_dir
from lemon_skills.skills.remote import store
from lemon_skills.skills.remote.verify import digest_of


def test_kept_bytes_come_back_by_digest_from_under_the_agent_dir():
    data = b"---\nname: pdf\n---\n"
    store.keep(digest_of(data), data)
    assert store.cached(digest_of(data)) == data
    assert store.cache_dir().is_relative_to(agent_dir())
    assert store.cached(digest_of(b"never kept")) is None


def test_a_damaged_blob_is_ignored_rather_than_trusted():
    data = b"the real text"
    store.keep(digest_of(data), data)
    blob = store.cache_dir() / "blobs" / digest_of(data).removeprefix("sha256:")
    blob.write_bytes(b"tampered on disk")
    assert store.cached(digest_of(data)) is None


def test_a_pin_is_kept_replaced_and_forgotten():
    assert store.pinned("srv:pdf") is None
    store.pin("srv:pdf", "sha256:one")
    assert store.pinned("srv:pdf") == "sha256:one"
    store.pin("srv:pdf", "sha256:two")
    assert store.pinned("srv:pdf") == "sha256:two"
    store.pin("srv:pdf", None)
    assert store.pinned("srv:pdf") is None


def test_approving_by_name_is_remembered_beside_the_pins():
    assert not store.reviewed("srv:pdf")
    store.pin("srv:pdf", None, review=True)
    assert store.reviewed("srv:pdf")
    store.pin("srv:other", "sha256:x")
    assert store.reviewed("srv:pdf") and not store.reviewed("srv:other")


def test_an_unreadable_pins_file_reads_as_no_pins():
    path = store.cache_dir() / "pins.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"pins": ["not", "a", "mapping"], "reviewed": "nope"}')
    assert store.pinned("srv:pdf") is None
    assert not store.reviewed("srv:pdf")
