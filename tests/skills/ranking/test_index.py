from __future__ import annotations

import random

import pytest
from benchmarks import regex_fields
from benchmarks.corpus import bench_dir

from lemon_skills.skills.format.manifest import Manifest
from lemon_skills.skills.format.model import Entry
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


def test_a_skill_named_unlike_its_folder_is_found_by_both():
    entry = Entry(
        key="pdf-tools",
        name="Acrobat pdf helper",
        description="d",
        source="global",
        path="/skills/pdf-tools",
        manifest=Manifest(),
        body=BODY,
    )
    assert idx.entry_fields(entry)["name"] == "pdf tools acrobat helper"


def test_very_long_bodies_are_cut():
    fields = idx.entry_fields(_entry("big", body="word " * idx.BODY_CHARS))
    assert len(fields["body"]) == idx.BODY_CHARS


def test_project_skills_have_priority_in_ties():
    assert idx.document(_entry("a", source="project")).priority == 1
    assert idx.document(_entry("a", source="global")).priority == 0


def test_tree_key_survives_edits_but_not_new_weights_or_places():
    entries = [_entry("a"), _entry("b")]
    key = idx.tree_key(entries)
    # An edit, an added or a removed skill updates the cached index: same file.
    assert idx.tree_key([_entry("a"), _entry("b", "edited")]) == key
    assert idx.tree_key(entries[:1]) == key
    assert idx.tree_key([_entry("a", source="project")]) != key
    heavier = idx.Weights(
        field_weight={**idx.DEFAULT_WEIGHTS.field_weight, "name": 9.0},
        field_b=idx.DEFAULT_WEIGHTS.field_b,
    )
    assert idx.tree_key(entries, heavier) != key


def test_bytes_round_trip_and_update_to_the_current_skills():
    entries = [_entry("a", "merge pdf files"), _entry("b", "deploy to kubernetes")]
    built = idx.build_index(entries)
    loaded = idx.update_index(idx.loads(idx.dumps(built)), entries)
    assert loaded.core is not built.core and loaded.core.keys == ("a", "b")
    swapped = idx.update_index(idx.loads(idx.dumps(built)), entries[::-1])
    assert swapped.core.keys == ("b", "a")
    assert swapped.core.names == idx.build_index(entries[::-1]).core.names
    with pytest.raises(ValueError):
        idx.loads(b"garbage")


def test_usage_field_holds_the_when_to_use_sections_only():
    body = (
        "# Tool\n\nIntro prose.\n\n"
        "## When to use this skill\n\n- rotating signing keys\n\n"
        "### Examples\n\n- before expiry\n\n"
        "## Steps\n\nRun it.\n\n"
        "## Do not use this skill when\n\n- auditing logs\n\n"
        "## Use cases\n\n```\n## not a heading\n```\n- renewing certificates\n"
    )
    usage = idx.entry_fields(_entry("keys", body=body))["usage"].split()
    assert "rotating" in usage and "expiry" in usage  # a sub-section belongs to its section
    assert "renewing" in usage and "not" not in usage  # code fences are dropped
    assert "Run" not in usage and "auditing" not in usage and "Intro" not in usage


_INDENTS = ("", "", " ", "  ", "   ", "    ", "\t")
_FENCES = ("```", "~~~", "```", "~~~", "````", "~~~~", "```python", "~~~ text", "``", "~ ~~")
_TITLES = (
    *("When to use this skill", "WHEN TO ACTIVATE", "use this skill when asked", "Use cases"),
    *("common use cases", "Related Use Cases:", "Triggers", "trigger", "Proactive triggers"),
    *("Do not use this skill when", "Triggered by", "Usecases", "when to apply it", "when to"),
    *("Use ca\u017fes", "\u212aeys", "Steps", "C# tips #1", "Title  ", "Title ##", "x\r", ""),
    *(" ", "  ", "\t"),
)
_PROSE = ("Use qpdf.", "C# and F#", "a # b", "`inline` code", "~~strike~~", "", "   ", "- item")


def _markdown(rng: random.Random) -> str:
    """A random body mixing fences of both kinds (open, closed, nested, indented), headings of
    1-7 "#" with and without titles, "#" inside lines and LF or CRLF line ends."""
    lines = []
    for _ in range(rng.randrange(30)):
        indent, kind = rng.choice(_INDENTS), rng.random()
        if kind < 0.25:
            line = rng.choice(_FENCES)
        elif kind < 0.6:
            gap = rng.choice(("", " ", " ", "  ", "\t", " \t"))
            line = "#" * rng.randint(1, 7) + gap + rng.choice(_TITLES)
        else:
            line = rng.choice(_PROSE)
        lines.append(indent + line + rng.choice(("\n", "\n", "\n", "\r\n")))
    text = "".join(lines)
    return text[:-1] if text and rng.random() < 0.3 else text


def _bodies():
    rng = random.Random(20261203)
    yield from (_markdown(rng) for _ in range(3000))
    try:
        skills = bench_dir()
    except SystemExit:  # no bench here: the random bodies alone
        return
    for path in sorted(skills.glob("*/SKILL.md")):
        yield path.read_text(encoding="utf-8")[: idx.BODY_CHARS]


def test_headings_and_usage_are_exactly_the_regex_definitions():
    # The fields the index used to find with multi-line regexes, found faster: same text.
    for body in _bodies():
        fields = idx.entry_fields(_entry("s", body=body))
        want = regex_fields.body_fields(body)
        assert {k: fields[k] for k in ("headings", "usage")} == want, body
        assert idx.usage_sections(body) == regex_fields.usage_sections(body), body
