from __future__ import annotations

import os
from pathlib import Path

from lemon_skills.skills import api
from lemon_skills.tools import ToolContext, read_skill
from lemon_skills.tools.read import extract_section
from tests.helpers.events import recording
from tests.helpers.skills import write_skill

BODY = """# PDF tools

Intro line.

## Usage

Run pdftotext on the file.

### Flags

Use -layout for tables.

```bash
## not a heading inside code
```

## Troubleshooting

Check the encoding.
"""


def _ctx(project: Path, **kw: str) -> ToolContext:
    return ToolContext(cwd=project, **kw)


def test_full_view_has_header_and_raw_skill_md_with_frontmatter(project, project_skills):
    d = write_skill(project_skills, "pdf", description="Read PDF files.", body=BODY)
    r = read_skill.call({"key": "pdf"}, _ctx(project))
    assert not r.is_error
    lines = r.text.split("\n")
    assert lines[:8] == [
        "# Skill: pdf",
        "",
        "**Key:** pdf",
        "**Description:** Read PDF files.",
        f"**Source:** Project ({project_skills})",
        f"**Path:** {d}",
        f"**Base directory:** {d} (relative paths in this skill resolve against it)",
        "**Activation:** active",
    ]
    assert "## Content\n\n---\nname: pdf\ndescription: Read PDF files.\n---" in r.text
    assert r.text.endswith("Check the encoding.\n")
    assert r.details["key"] == "pdf" and r.details["path"] == str(d)


def test_summary_lists_supporting_files_but_no_content(project, project_skills):
    d = write_skill(project_skills, "pdf", body=BODY)
    (d / "references").mkdir()
    (d / "references" / "api.md").write_text("api")
    (d / "scripts").mkdir()
    (d / "scripts" / "run.sh").write_text("echo")
    r = read_skill.call({"key": "pdf", "view": "summary"}, _ctx(project))
    # Absolute too, so a reference the skill makes relative to its folder resolves anywhere.
    api, run = d / "references" / "api.md", d / "scripts" / "run.sh"
    assert f"## Files\n\n- references/api.md ({api})\n- scripts/run.sh ({run})" in r.text
    assert api.is_absolute()
    assert "Run pdftotext" not in r.text and "## Content" not in r.text


def test_section_includes_subsections_and_stops_at_next_same_level_heading(project, project_skills):
    write_skill(project_skills, "pdf", body=BODY)
    r = read_skill.call({"key": "pdf", "view": "section", "section": "usage"}, _ctx(project))
    assert not r.is_error
    assert "## Section" not in r.text and r.text.count("## Usage") == 1  # the heading, once
    section = r.text.split("## Usage\n\n", 1)[1]
    assert section.startswith("Run pdftotext")
    assert "### Flags" in section and "-layout" in section
    assert "## not a heading inside code" in section
    assert "Troubleshooting" not in section


def test_extract_section_accepts_hashes_and_any_level_and_ignores_code_fences():
    body = "# Title\n\n```\n## Setup\n```\n\n## Setup\n\nreal\n\n# Next\n"
    assert extract_section(body, "## setup") == "## Setup\n\nreal"
    assert extract_section(body, "title") == "# Title\n\n```\n## Setup\n```\n\n## Setup\n\nreal"
    assert extract_section(body, "missing") is None


def test_missing_section_is_an_error_that_lists_the_headings(project, project_skills):
    write_skill(project_skills, "pdf", body=BODY)
    r = read_skill.call({"key": "pdf", "view": "section", "section": "Install"}, _ctx(project))
    assert r.is_error
    assert "Section 'Install' not found in skill content." in r.text
    assert "Usage" in r.text and "Troubleshooting" in r.text
    r = read_skill.call({"key": "pdf", "view": "section"}, _ctx(project))
    assert "No section specified. Use the 'section' parameter to name a heading." in r.text


def test_file_view_reads_a_supporting_file(project, project_skills):
    d = write_skill(project_skills, "pdf")
    (d / "references").mkdir()
    (d / "references" / "api.md").write_text("the api\n")
    r = read_skill.call({"key": "pdf", "view": "file", "path": "references/api.md"}, _ctx(project))
    assert not r.is_error
    assert r.text.endswith("## File: references/api.md\n\nthe api\n")


def test_file_view_refuses_paths_and_symlinks_leaving_the_skill_dir(
    project, project_skills, tmp_path
):
    d = write_skill(project_skills, "pdf")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    os.symlink(secret, d / "link.txt")
    for rel, said in (
        ("../../../../secret.txt", "is outside the skill directory."),
        (str(secret), "is outside the skill directory."),
        ("link.txt", "refused: symlink resolves outside the skill directory."),
    ):
        r = read_skill.call({"key": "pdf", "view": "file", "path": rel}, _ctx(project))
        assert r.is_error, rel
        assert f"Path '{rel}' {said}" in r.text
        assert "TOP SECRET" not in r.text


def test_file_view_follows_symlinks_that_stay_inside(project, project_skills):
    d = write_skill(project_skills, "pdf")
    (d / "references").mkdir()
    (d / "references" / "real.md").write_text("inside")
    os.symlink(d / "references" / "real.md", d / "references" / "alias.md")
    r = read_skill.call(
        {"key": "pdf", "view": "file", "path": "references/alias.md"}, _ctx(project)
    )
    assert not r.is_error and r.text.endswith("inside")


def test_file_view_missing_file_and_binary_file(project, project_skills):
    d = write_skill(project_skills, "pdf")
    (d / "assets").mkdir()
    (d / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    r = read_skill.call({"key": "pdf", "view": "file", "path": "assets/nope.md"}, _ctx(project))
    assert r.is_error and "Could not read 'assets/nope.md'" in r.text
    assert "assets/logo.png" in r.text  # tells the model which files exist
    r = read_skill.call({"key": "pdf", "view": "file", "path": "assets/logo.png"}, _ctx(project))
    assert "(binary file, 11 bytes; not shown)" in r.text
    r = read_skill.call({"key": "pdf", "view": "file"}, _ctx(project))
    assert r.is_error and "No path specified." in r.text


def test_max_chars_truncates_content_with_a_marker(project, project_skills):
    write_skill(project_skills, "pdf", body=BODY)
    r = read_skill.call({"key": "pdf", "max_chars": 10}, _ctx(project))
    assert r.text.endswith("## Content\n\n---\nname: \n... (truncated at 10 chars)")
    assert r.details["truncated"] is True


def test_status_and_manifest_sections(project, project_skills):
    d = write_skill(
        project_skills,
        "k8s",
        extra="platforms: [linux, darwin]\nrequires:\n  bins: [definitely-missing-bin-xyz]\n"
        "  env: [K8S_TOKEN_FOR_TEST]",
    )
    (d / "references").mkdir()
    (d / "references" / "a.md").write_text("a")
    r = read_skill.call(
        {"key": "k8s", "include_status": True, "include_manifest": True, "view": "summary"},
        _ctx(project),
    )
    assert (
        "## Status\n\n**Ready:** false\n**Missing binaries:** definitely-missing-bin-xyz" in r.text
    )
    assert "**Missing env vars:** K8S_TOKEN_FOR_TEST" in r.text
    assert "- platforms: linux, darwin" in r.text
    assert "- required_bins: definitely-missing-bin-xyz" in r.text
    assert "- references: 1 file(s)" in r.text
    assert "**Activation:** not_ready" in r.text
    plain = read_skill.call({"key": "k8s", "view": "summary"}, _ctx(project))
    assert "## Status" not in plain.text and "## Manifest" not in plain.text


def test_disabled_skill_is_readable_and_flagged(project, project_skills):
    write_skill(project_skills, "pdf")
    api.disable("pdf", cwd=project, scope="project")
    r = read_skill.call({"key": "pdf", "include_status": True}, _ctx(project))
    assert "**Activation:** hidden" in r.text
    assert "**Disabled:** true (project)" in r.text
    assert "skill_manage action=restore" in r.text


def test_miss_suggests_closest_keys(project, project_skills):
    write_skill(project_skills, "pdf-tools", description="Read PDFs.")
    write_skill(project_skills, "docker", description="Containers.")
    r = read_skill.call({"key": "pdf-tool"}, _ctx(project))
    assert r.is_error
    assert r.text.startswith("Skill not found: pdf-tool\n\nDid you mean:\n- pdf-tools: Read PDFs.")
    assert "docker" not in r.text
    assert r.details == {"error": "not_found", "key": "pdf-tool"}
    r = read_skill.call({"key": "zzzz"}, _ctx(project))
    assert "Available skills:\n- docker: Containers.\n- pdf-tools: Read PDFs." in r.text


def test_miss_with_no_skills(project):
    r = read_skill.call({"key": "anything"}, _ctx(project))
    assert r.text == "Skill not found: anything\n\nNo skills are currently available.\n"


def test_lookup_falls_back_to_the_frontmatter_name(project, project_skills):
    write_skill(project_skills, "pdf-dir", name="PDF Tools")
    r = read_skill.call({"key": "pdf tools", "view": "summary"}, _ctx(project))
    assert not r.is_error and r.details["key"] == "pdf-dir"


def test_invalid_parameters_come_back_as_errors_not_exceptions(project):
    r = read_skill.call({"key": "x", "view": "everything"}, _ctx(project))
    assert r.is_error and "view" in r.text
    r = read_skill.call({}, _ctx(project))
    assert r.is_error and "key" in r.text


def test_load_events_on_hit_and_miss_carry_call_and_session_metadata(project, project_skills):
    d = write_skill(project_skills, "pdf", body=BODY)
    ctx = _ctx(project, tool_call_id="call-1", run_id="run-1", session_id="sess-1", agent_id="ag")
    with recording() as rec:
        read_skill.call({"key": "pdf", "view": "section", "section": "Usage"}, ctx)
        read_skill.call({"key": "nope"}, ctx)
    hit, miss = rec.named("skill.load")
    assert hit.metadata == {
        "result": "ok",
        "key": "pdf",
        "name": "pdf",
        "source": "project",
        "path": str(d),
        "view": "section",
        "section": "Usage",
        "cwd": str(project),
        "tool_call_id": "call-1",
        "run_id": "run-1",
        "session_id": "sess-1",
        "agent_id": "ag",
    }
    assert miss.metadata["result"] == "not_found" and miss.metadata["key"] == "nope"
    assert "path" not in miss.metadata and "source" not in miss.metadata
    assert hit.measurements["count"] == 1 and hit.measurements["system_time"] > 0


def test_exports_to_model_tool_formats():
    assert read_skill.to_openai()["function"]["name"] == "read_skill"
    schema = read_skill.to_anthropic()["input_schema"]
    assert schema["required"] == ["key"]
    assert schema["properties"]["view"]["enum"] == ["full", "summary", "section", "file"]


def test_a_refused_view_is_an_error_event_and_not_counted_as_a_load(project, project_skills):
    from lemon_skills.skills.usage.store import UsageStore

    write_skill(project_skills, "pdf", body=BODY)
    ctx = _ctx(project, tool_call_id="call-1")
    with recording() as rec:
        assert not read_skill.call({"key": "pdf"}, ctx).is_error
        refused = read_skill.call({"key": "pdf", "view": "file", "path": "../../x"}, ctx)
        assert refused.is_error
    ok, error = rec.named("skill.load")
    assert ok.metadata["result"] == "ok"
    assert error.metadata["result"] == "error" and error.metadata["key"] == "pdf"
    records = UsageStore.for_scope("project", project).records()
    assert records["pdf"]["load_count"] == 1


def test_a_skill_md_swapped_for_an_escaping_symlink_after_discovery_is_never_read(
    project, project_skills, tmp_path
):
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:SECRET\n")
    d = write_skill(project_skills, "x")
    assert not read_skill.call({"key": "x"}, _ctx(project)).is_error  # discovered and cached
    (d / "SKILL.md").unlink()
    (d / "SKILL.md").symlink_to(secret)
    for view in ("full", "section"):
        r = read_skill.call({"key": "x", "view": view, "section": "Usage"}, _ctx(project))
        assert "SECRET" not in r.text
    r = read_skill.call({"key": "x", "view": "file", "path": "SKILL.md"}, _ctx(project))
    assert r.is_error and "SECRET" not in r.text
    assert "refused: symlink" in r.text


def test_a_nul_byte_in_a_file_path_is_a_one_line_error(project, project_skills):
    write_skill(project_skills, "demo", description="Demo skill for testing things")
    result = read_skill.call(
        {"key": "demo", "view": "file", "path": "a\x00b"}, ToolContext(cwd=str(project))
    )
    assert result.is_error
    assert result.text.splitlines()[-1] == "Path contains a NUL byte; name a file of the skill."
