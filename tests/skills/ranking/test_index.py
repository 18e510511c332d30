from __future__ import annotations

import pytest

from lemon_skills.skills.manifest import Manifest
from lemon_skills.skills.model import Entry
from lemon_skills.skills.ranking import index as idx

BODY = "# Merging\n\nUse qpdf.\n\n```\n# not a heading\n```\n## Splitting pages\n"


def _entry(key, description="d", body=BODY, source="global", **manifest):
    return Entry(
        key=key,
        name=key,
        description=description,
        source=source,
        path=f"/skills/{key}",
        manifest=Manifest(**manifest),
        body=body,
    )


def test_fields_split_a_skill_into_name_keywords_description_headings_and_body():
    fields = idx.entry_fields(_entry("pdf-tools", "Merge PDFs.", tags=("docs",), category="files"))
    assert fields["name"] == "pdf tools"
    assert fields["keywords"] == "docs files"
    assert fields["description"] == "Merge PDFs."
    assert fields["headings"] == "Merging\nSplitting pages"  # not the line inside the fence


def test_very_long_bodies_are_cut():
    fields = idx.entry_fields(_entry("big", body="word " * idx.BODY_CHARS))
    assert len(fields["body"]) == idx.BODY_CHARS


def test_project_skills_have_priority_in_ties():
    assert idx.document(_entry("a", source="project")).priority == 1
    assert idx.document(_entry("a", source="global")).priority == 0


def test_cache_key_changes_when_any_skill_or_weight_changes():
    entries = [_entry("a"), _entry("b")]
    key = idx.cache_key(entries)
    assert idx.cache_key([_entry("a"), _entry("b")]) == key
    assert idx.cache_key([_entry("a"), _entry("b", "edited")]) != key
    assert idx.cache_key(entries[:1]) != key
    heavier = idx.Weights(
        field_weight={**idx.DEFAULT_WEIGHTS.field_weight, "name": 9.0},
        field_b=idx.DEFAULT_WEIGHTS.field_b,
    )
    assert idx.cache_key(entries, heavier) != key


def test_bytes_round_trip_for_the_same_skills_and_refuse_others():
    entries = [_entry("a", "merge pdf files"), _entry("b", "deploy to kubernetes")]
    built = idx.build_index(entries)
    loaded = idx.loads(idx.dumps(built), entries)
    assert loaded.core.keys == built.core.keys == ("a", "b")
    with pytest.raises(ValueError):
        idx.loads(idx.dumps(built), [_entry("b"), _entry("a")])
    with pytest.raises(ValueError):
        idx.loads(b"garbage", entries)
