"""The host side of the conformance suite's skills scenarios: a listed skill is used as a host
uses it (SKILL.md verified first, then each supporting file) and a refusal ends with its
diagnostic instead of an exception."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lemon_skills.context import using
from lemon_skills.skills import remote
from lemon_skills.skills.remote import store
from lemon_skills.skills.remote.model import Listing, RemoteFile, RemoteSkill
from lemon_skills.skills.remote.verify import digest_of
from lemon_skills.tools.skills_conformance import use

BODY = b"---\nname: pdf\ndescription: Fill PDF forms\n---\n\nBody.\n"
GUIDE = b"Supporting text.\n"
MAIN, SIDE = "skill://pdf/SKILL.md", "skill://pdf/references/guide.md"


class Source:
    def __init__(self, listing: Listing) -> None:
        self.listing = listing

    def listings(self, cwd: Any) -> Sequence[Listing]:
        return [self.listing]

    def generation(self, cwd: Any) -> object:
        return 0


def serve(served: dict[str, bytes]) -> tuple[list[str], Listing]:
    reads: list[str] = []

    def fetch(uri: str, limit: int) -> bytes:
        reads.append(uri)
        return served[uri]

    skill = RemoteSkill(
        "conformance",
        MAIN,
        "pdf",
        "Fill PDF forms",
        {"name": "pdf", "description": "Fill PDF forms"},
        (
            RemoteFile(MAIN, digest_of(BODY), len(BODY)),
            RemoteFile(SIDE, digest_of(GUIDE), len(GUIDE)),
        ),
    )
    return reads, Listing("conformance", (skill,), (), fetch)


def used(listing: Listing, tmp_path: Path) -> None:
    with using() as ctx:
        ctx.put(remote.Sources, remote.Sources([Source(listing)]))
        (entry,), _, _ = remote.entries(remote.listings(None), {}, tmp_path)
        use(entry)


def test_a_verified_skill_is_loaded_then_its_supporting_files(tmp_path: Path):
    reads, listing = serve({MAIN: BODY, SIDE: GUIDE})
    used(listing, tmp_path)
    assert reads == [MAIN, SIDE]
    assert store.cached(digest_of(GUIDE)) == GUIDE


def test_a_tampered_supporting_file_is_refused_with_its_diagnostic(tmp_path, caplog):
    evil = GUIDE.replace(b"Supporting", b"Malicious!")
    reads, listing = serve({MAIN: BODY, SIDE: evil})
    with caplog.at_level(logging.INFO, logger="lemon_skills.conformance"):
        used(listing, tmp_path)
    assert any("refused" in r.message and "digest mismatch" in r.message for r in caplog.records)
    assert store.cached(digest_of(evil)) is None


@pytest.mark.parametrize("tampered", [BODY.replace(b"Body.", b"Evil!"), BODY + b"more"])
def test_a_refused_skill_md_means_no_supporting_file_is_read(tmp_path, caplog, tampered):
    reads, listing = serve({MAIN: tampered, SIDE: GUIDE})
    with caplog.at_level(logging.INFO, logger="lemon_skills.conformance"):
        used(listing, tmp_path)
    assert reads == [MAIN]
    assert any("refused" in r.message for r in caplog.records)
