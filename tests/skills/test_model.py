from __future__ import annotations

import os

from lemon_skills.skills.format.compact import compact
from lemon_skills.skills.format.manifest import parse_skill
from lemon_skills.skills.format.model import Entry, cached_entry
from tests.helpers.skills import write_skill

EXTRA = (
    "tags: [pdf]\npaths: ['**/*.pdf']\ndisable-model-invocation: true\n"
    "hooks: {pre: x}\nversion: '2'"
)


def _pair(tmp_path):
    skill_dir = write_skill(tmp_path, "pdf", description="Merge PDFs.", extra=EXTRA)
    text = (skill_dir / "SKILL.md").read_text("utf-8")
    parsed = parse_skill(text)
    full = Entry(
        key="pdf",
        name="pdf",
        description="Merge PDFs.",
        source="global",
        path=skill_dir,
        manifest=parsed.manifest,
        body=parsed.body,
    )
    fields = compact(parsed.manifest, name="pdf", description="Merge PDFs.")
    cached = cached_entry(
        "pdf",
        "pdf",
        "Merge PDFs.",
        "global",
        str(skill_dir),
        tmp_path,
        os.path.realpath(skill_dir),
        (0, 0, 0),
        fields,
    )
    return full, cached


def test_a_cached_entry_reads_like_the_parsed_one(tmp_path):
    full, cached = _pair(tmp_path)
    assert cached.to_dict() == full.to_dict()
    assert cached.paths == full.paths == ("**/*.pdf",)
    assert cached.flag("disable_model_invocation") is full.flag("disable_model_invocation") is True
    assert dict(cached.extra) == dict(full.extra)
    assert cached.body == full.body
    assert cached.manifest.tags == full.manifest.tags


def test_with_enabled_changes_only_the_switch(tmp_path):
    full, _ = _pair(tmp_path)
    off = full.with_enabled(False)
    assert off.enabled is False and full.enabled is True
    assert (off.key, off.body, off.manifest) == (full.key, full.body, full.manifest)


def test_the_body_of_a_vanished_skill_is_empty_not_an_error(tmp_path):
    entry = Entry(key="gone", name="gone", description="", source="global", path=tmp_path / "gone")
    assert entry.body == ""


def test_content_is_the_whole_skill_md(tmp_path):
    full, cached = _pair(tmp_path)
    assert cached.content() == full.content() == (full.path / "SKILL.md").read_text("utf-8")
    assert cached.content().startswith("---\nname: pdf\n")
