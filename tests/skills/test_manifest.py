from __future__ import annotations

import pytest

from lemon_skills.errors import ManifestError
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.skills.format.manifest import parse_skill


def parse(text: str):
    return parse_skill(text)


def test_basic_yaml_frontmatter_and_body():
    p = parse("---\nname: db\ndescription: Use for databases.\n---\n\n## Schema\n\nText\n")
    assert p.manifest.name == "db"
    assert p.manifest.description == "Use for databases."
    assert p.body == "## Schema\n\nText"
    assert p.manifest.format == "yaml"


def test_bom_and_crlf_are_accepted():
    p = parse("\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\nbody line\r\n")
    assert p.manifest.name == "x"
    assert p.body == "body line"


def test_quoted_values_lose_their_quotes():
    p = parse("---\nname: \"quoted\"\ndescription: 'single: with colon'\n---\nb")
    assert p.manifest.name == "quoted"
    assert p.manifest.description == "single: with colon"


def test_flow_lists_and_block_lists():
    p = parse("---\nname: x\ndescription: d\ntags: [a, b]\nkeywords:\n  - k1\n  - k2\n---\nb")
    assert p.manifest.tags == ("a", "b")
    assert p.manifest.keywords == ("k1", "k2")


def test_comma_separated_string_list_is_split():
    p = parse("---\ndescription: d\ntags: alpha, beta\n---\nb")
    assert p.manifest.tags == ("alpha", "beta")


def test_nested_maps_and_list_items_with_keys_do_not_break_parsing():
    text = (
        "---\nname: x\ndescription: d\nreferences:\n  - path: a.md\n    description: first\n"
        "requires:\n  bins: [git]\n  env:\n    - TOKEN\n---\nbody"
    )
    p = parse(text)
    assert p.manifest.raw["references"] == [{"path": "a.md", "description": "first"}]
    assert p.manifest.requires.bins == ("git",)
    assert p.manifest.requires.env == ("TOKEN",)


def test_multiline_strings():
    p = parse("---\nname: x\ndescription: >\n  folded over\n  two lines\n---\nb")
    assert p.manifest.description == "folded over two lines"
    p = parse("---\nname: x\ndescription: |\n  literal\n  block\n---\nb")
    assert p.manifest.description == "literal block"


def test_body_ending_with_horizontal_rule_stays_body():
    text = "---\nname: x\ndescription: d\n---\n\nIntro\n\nKey: value\n\n---\n"
    p = parse(text)
    assert p.manifest.name == "x"
    assert "Key" not in p.manifest.raw
    assert p.body == "Intro\n\nKey: value\n\n---"


def test_file_without_frontmatter_is_all_body():
    p = parse("# Title\n\nJust text\n")
    assert p.manifest.format == "none"
    assert p.manifest.name is None
    assert p.body == "# Title\n\nJust text"
    assert any(w.field == "frontmatter" for w in p.warnings)


def test_toml_frontmatter():
    p = parse(
        '+++\nname = "t"\ndescription = "toml skill"\ntags = ["x"]\n[requires]\n'
        'bins = ["jq"]\n+++\nbody'
    )
    assert p.manifest.format == "toml"
    assert p.manifest.name == "t"
    assert p.manifest.tags == ("x",)
    assert p.manifest.requires.bins == ("jq",)


def test_unclosed_frontmatter_is_an_error_with_the_line():
    with pytest.raises(ManifestError, match="never closed"):
        split_frontmatter("---\nname: x\n")


def test_invalid_yaml_is_an_error_naming_the_line():
    with pytest.raises(ManifestError, match="line 2"):
        parse("---\nname: x\n  bad: [unclosed\n---\nb")


def test_unquoted_colon_in_description_is_recovered_with_warning():
    p = parse("---\nname: x\ndescription: Use this: for things: ok\n---\nb")
    assert p.manifest.description == "Use this: for things: ok"
    assert any("quoting" in w.message for w in p.warnings)


def test_frontmatter_that_is_not_a_mapping_is_an_error():
    with pytest.raises(ManifestError, match="mapping"):
        parse("---\n- a\n- b\n---\nbody")


def test_lemon_metadata_requires_os_and_category():
    text = (
        '---\nname: gh\ndescription: "GitHub via gh"\nmetadata:\n  {\n    "lemon":\n      {\n'
        '        "requires": { "bins": ["gh"], "env": ["GH_TOKEN"] },\n        "os": ["darwin", '
        '"linux"],\n        "category": "dev",\n        "install": [{"id": "brew",},],\n      },\n'
        "  }\n---\nbody"
    )
    m = parse(text).manifest
    assert m.description == "GitHub via gh"
    assert m.requires.bins == ("gh",)
    assert m.requires.env == ("GH_TOKEN",)
    assert m.platforms == ("darwin", "linux")
    assert m.category == "dev"


def test_top_level_and_lemon_requires_are_merged():
    text = (
        "---\ndescription: d\nrequires:\n  bins: [git]\nmetadata:\n  lemon:\n    requires:\n"
        "      bins: [gh, git]\n---\nb"
    )
    assert parse(text).manifest.requires.bins == ("git", "gh")


def test_wrong_field_shapes_become_warnings_not_errors():
    p = parse(
        "---\nname: x\ndescription: d\nrequires: kubectl\nplatforms: [beos]\nmetadata: 5\n---\nb"
    )
    fields = {w.field for w in p.warnings}
    assert {"requires", "platforms", "metadata"} <= fields
    assert p.manifest.platforms == ("any",)
    assert p.manifest.requires.bins == ()


def test_scalar_platform_and_aliases_are_normalised():
    assert parse("---\ndescription: d\nplatforms: macos\n---\nb").manifest.platforms == ("darwin",)


def test_numbers_and_dates_become_strings():
    m = parse("---\ndescription: d\nversion: 1.0\nauthor: 2024-01-01\n---\nb").manifest
    assert m.version == "1.0"
    assert m.author == "2024-01-01"


def test_disable_model_invocation_and_allowed_tools():
    m = parse(
        "---\ndescription: d\ndisable-model-invocation: true\n"
        "allowed-tools: Bash(git:*) Read\n---\nb"
    ).manifest
    assert m.disable_model_invocation is True
    assert m.allowed_tools == ("Bash(git:*)", "Read")


def test_body_line_points_at_first_body_line():
    p = parse("---\nname: x\ndescription: d\n---\n\nfirst\n")
    assert p.body_line == 6


def _yaml_reading(source: str):
    import yaml

    data = yaml.load(source, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else None)
    return {str(k): v for k, v in (data or {}).items()}


@pytest.mark.parametrize(
    "source",
    [
        "name: db\ndescription: Use for databases, [tables] and {rows}.",
        'name: "a11y"\ndescription: "Audit pages: contrast, keyboard."\n\nlicense: MIT  ',
        "name: 'x'\ndescription: ''",
        "name: a\nname: b",
        "description: Café — naïve ✓ 日本語 & more | stuff > less",
    ],
)
def test_plain_frontmatter_is_read_as_yaml_reads_it_without_the_yaml_parser(source):
    from lemon_skills.skills.format.frontmatter import plain_mapping

    assert plain_mapping(source) == _yaml_reading(source)


@pytest.mark.parametrize(
    "source",
    [
        "name: db\ndescription: on",  # a bool, not the text "on"
        "yes: x",
        "description: null",
        "version: 2",
        "description: a: b",
        "description: text # a comment",
        "metadata:\n  author: x",
        "description: first\n  continued",
        "tags: [a, b]",
        'description: "tab\\there"',
        "description: 'it''s'",
        "description: a\rb",
        "description: a\u2028b",
        "name:\tdb",
        "# a comment\nname: db",
    ],
)
def test_frontmatter_beyond_plain_strings_goes_to_the_yaml_parser(source):
    from lemon_skills.skills.format.frontmatter import plain_mapping

    assert plain_mapping(source) is None


def test_plain_reading_never_differs_from_yaml_on_random_frontmatter():
    import random

    from lemon_skills.skills.format.frontmatter import plain_mapping

    rng = random.Random(19)
    keys = ["name", "description", "on", "null", "x-y_z", "a1", "3d", "-k"]
    common = list("ab Z-_.,[]{}|>&*!%@`~09é✓") + ["on", "no", "null", "True"]
    rare = list(":#'\"\t\\\u2028\x85\r\x07")
    quotes = ["", "", '"', "'"]
    claimed = 0
    for _ in range(5_000):
        lines = []
        for _ in range(rng.randint(1, 3)):
            quote = rng.choice(quotes)
            value = "".join(
                rng.choice(rare if rng.random() < 0.05 else common)
                for _ in range(rng.randint(0, 12))
            )
            lines.append(rng.choice(keys) + rng.choice([": ", ":  ", ":"]) + quote + value + quote)
        source = "\n".join(lines)
        plain = plain_mapping(source)
        if plain is not None:
            claimed += 1
            assert plain == _yaml_reading(source), source
    assert claimed > 200  # the generator reaches the plain path, not only the fallback
