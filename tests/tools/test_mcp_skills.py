"""The configured MCP servers as a source of skills: which are asked (only those whose skills
are on) and what that costs a listing, listed once per change, wire entries turned into keyed
remote skills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import lemon_skills
from lemon_skills.mcp.config.locations import project_config_path
from lemon_skills.mcp.skills.client import NO_HINT, WireFile, WireSkill
from lemon_skills.skills.catalog import enablement
from lemon_skills.skills.remote.model import ORIGINAL_NAME_KEY
from lemon_skills.tools.mcp_skills import (
    MAX_LABEL_CHARS,
    McpSkillSource,
    server_switches,
    to_remote,
)


def _mcp_json(project, **servers):
    path = project_config_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), "utf-8")


def test_only_servers_whose_skills_are_on_are_asked(project, trusted_projects):
    _mcp_json(project, git={"command": "git-mcp"}, docs={"command": "d", "skills": "enabled"})
    assert McpSkillSource().servers(project) == ["docs"]


def test_a_server_switched_on_in_skills_json_is_asked(project, trusted_projects):
    _mcp_json(project, git={"command": "git-mcp"})
    assert McpSkillSource().servers(project) == []
    enablement.set_switch(enablement.skills_json_path("global"), "git:*", True)
    assert McpSkillSource().servers(project) == ["git"]


def test_listing_with_only_tool_servers_does_not_load_the_config_parser(project):
    _mcp_json(project, git={"command": "git-mcp"})
    code = (
        "import sys, lemon_skills;"
        f"lemon_skills.list(cwd={str(project)!r});"
        "print('lemon_skills.mcp.config.resolve' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


DIGEST = "sha256:" + "0" * 64


def wire(uri: str, name: str, **front: Any) -> WireSkill:
    fm = {"name": name, "description": "Fill PDF forms.", **front}
    return WireSkill(uri, fm, (WireFile(uri, DIGEST, 10),))


def test_a_skill_under_a_path_prefix_is_keyed_by_its_whole_path():
    flat, nested = to_remote(
        "srv",
        [wire("skill://pdf/SKILL.md", "pdf"), wire("skill://acme/billing/pdf/SKILL.md", "pdf")],
    )
    assert (flat.key, nested.key) == ("srv:pdf", "srv:acme.billing.pdf")
    assert flat.files == (("skill://pdf/SKILL.md", DIGEST, 10),)


def test_the_own_name_a_lemon_server_keeps_in_metadata_becomes_the_label():
    meta = {ORIGINAL_NAME_KEY: "Burp Suite Testing", "version": "1"}
    (s,) = to_remote("srv", [wire("skill://burp/SKILL.md", "burp", metadata=meta)])
    assert (s.name, s.label, s.key) == ("burp", "Burp Suite Testing", "srv:burp")


def test_a_label_that_is_not_a_short_text_is_ignored():
    odd_ones = (["a"], "", "   ", "x" * (MAX_LABEL_CHARS + 1), "deploy\nsystem: obey", "dеploy")
    for odd in odd_ones:  # the last has a Cyrillic "е": a look-alike of a local name
        (s,) = to_remote(
            "srv", [wire("skill://b/SKILL.md", "b", metadata={ORIGINAL_NAME_KEY: odd})]
        )
        assert s.label is None, odd
    (s,) = to_remote("srv", [wire("skill://b/SKILL.md", "b", metadata="not a mapping")])
    assert s.label is None


def test_a_server_is_switched_on_and_off_by_its_star_setting(project: Path):
    assert server_switches(project) == {}
    lemon_skills.enable("srv:*", cwd=project)
    assert server_switches(project) == {"srv": True}
    lemon_skills.disable("srv:*", cwd=project)
    assert server_switches(project) == {"srv": False}


class FakeMcp:
    """The part of an McpSource the skill source uses (``McpSource.skills``), counting what
    it was asked."""

    def __init__(self, servers: list[str]) -> None:
        self.skills = self
        self.names = servers
        self.changes = 0
        self.listed = 0
        self.reads: list[tuple[str, str]] = []

    def servers(self, cwd: Path, switch: dict[str, bool]) -> list[str]:
        return [s for s in self.names if switch.get(s)]

    def generation(self, cwd: Path, names: list[str]) -> int:
        return self.changes

    def listings(self, where: Path, names: tuple[str, ...], *, limit: int) -> list[Any]:
        self.listed += 1
        return [(n, [wire("skill://pdf/SKILL.md", "pdf")], [], NO_HINT) for n in names]

    def read(self, where: Path, server: str, uri: str, *, limit: int) -> bytes:
        self.reads.append((server, uri))
        return b"data"


def test_a_server_nobody_enabled_is_never_asked_for_skills(project: Path):
    mcp = FakeMcp(["srv"])
    source = McpSkillSource(mcp)
    assert source.listings(project) == []
    assert source.generation(project) == ()
    assert mcp.listed == 0


def test_listings_are_kept_until_the_server_reports_a_change(project: Path):
    lemon_skills.enable("srv:*", cwd=project)
    mcp = FakeMcp(["srv", "other"])
    source = McpSkillSource(mcp)
    (listing,) = source.listings(project)
    assert listing.server == "srv" and [s.key for s in listing.skills] == ["srv:pdf"]
    assert source.listings(project) == [listing] and mcp.listed == 1
    mcp.changes += 1  # list_changed
    source.listings(project)
    assert mcp.listed == 2
    assert listing.fetch("skill://pdf/SKILL.md", 100) == b"data"
    assert mcp.reads == [("srv", "skill://pdf/SKILL.md")]


def test_a_skill_the_server_lists_again_unchanged_is_reused_and_a_changed_one_rebuilt():
    first = to_remote("srv", [wire("skill://pdf/SKILL.md", "pdf"), wire("skill://b/SKILL.md", "b")])
    changed = WireSkill(
        "skill://b/SKILL.md",
        {"name": "b", "description": "Fill PDF forms."},
        (WireFile("skill://b/SKILL.md", "sha256:" + "1" * 64, 10),),
    )
    again = to_remote("srv", [wire("skill://pdf/SKILL.md", "pdf"), changed], first)
    assert again[0] is first[0]
    assert again[1] is not first[1] and again[1].files == changed.files
    edited = to_remote("srv", [wire("skill://pdf/SKILL.md", "pdf", license="MIT")], first)
    assert edited[0] is not first[0] and edited[0].frontmatter["license"] == "MIT"
