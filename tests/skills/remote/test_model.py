from __future__ import annotations

from lemon_skills.skills.remote.model import RemoteFile, RemoteSkill

FILES = (
    RemoteFile("skill://pdf/SKILL.md", "sha256:aa", 10),
    RemoteFile("skill://pdf/ref.md", "sha256:bb", 20),
)


def _skill(files=FILES, alias=None):
    return RemoteSkill("srv", "skill://pdf/SKILL.md", "pdf", "Merge PDFs.", {}, files, alias)


def test_the_key_carries_the_server_so_origins_never_collide():
    assert _skill().key == "srv:pdf"
    assert _skill(alias="tools.pdf").key == "srv:tools.pdf"


def test_only_listed_files_are_part_of_the_skill():
    assert _skill().file("skill://pdf/ref.md") == FILES[1]
    assert _skill().file("skill://other/x.md") is None
    assert _skill(files=None).file("skill://pdf/SKILL.md") is None


def test_the_resources_digest_ignores_order_but_not_content():
    digest = _skill().resources_digest()
    assert digest.startswith("sha256:")
    assert _skill(files=FILES[::-1]).resources_digest() == digest
    changed = (FILES[0], RemoteFile("skill://pdf/ref.md", "sha256:cc", 20))
    assert _skill(files=changed).resources_digest() != digest
    assert _skill(files=FILES[:1]).resources_digest() != digest
