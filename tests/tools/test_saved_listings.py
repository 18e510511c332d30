"""Skills of a stdio skills server on every turn: `lemon prompt` answers a second time from the
saved listing and the digest-keyed bodies without starting the server, a background refresh
notices a changed skill (which stays withheld), and a saved listing is never trusted beyond
what it is: a damaged one is ignored, one saved for another config entry is not used, an
untrusted project's servers are neither started by a refresh nor listed from an old save, and a
process that lives on asks the server once its saved listing expired."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lemon_skills.mcp.config.locations import global_config_path
from lemon_skills.skills.remote import saved
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.slow

#: The server: counts its starts in a file, then serves a directory's skills over stdio.
_SERVER = """
import sys
with open(sys.argv[1], "a") as f:
    f.write("start\\n")
from lemon_skills.cli import main
sys.exit(main(["mcp", "serve", "--cwd", sys.argv[2]]))
"""
REQUEST = "deploy kubernetes clusters with helm"


@pytest.fixture
def served(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    skills = root / ".lemon" / "skill"
    write_skill(skills, "alpha", description="Deploy kubernetes clusters with helm.")
    write_skill(skills, "beta", description="Write release notes from git history.")
    (tmp_path / "server.py").write_text(_SERVER, encoding="utf-8")
    return root


def entry(tmp_path: Path, served: Path, **extra: object) -> dict[str, object]:
    script = str(tmp_path / "server.py")
    counter = str(tmp_path / "starts")
    return {"command": sys.executable, "args": [script, counter, str(served)], **extra}


def configure_globally(tmp_path: Path, served: Path, **extra: object) -> None:
    cfg = {"mcpServers": {"srv": entry(tmp_path, served, skills="enabled", **extra)}}
    path = global_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cfg), encoding="utf-8")


def starts(tmp_path: Path) -> int:
    counter = tmp_path / "starts"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def lemon(
    *args: str, background: bool = False, trust: bool = False
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LEMON_BACKGROUND_INDEX="1" if background else "0")
    if trust:
        env["LEMON_TRUST_PROJECT_MCP"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "lemon_skills", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def prompt(project: Path, *, background: bool = False, trust: bool = False) -> dict[str, object]:
    argv = ("prompt", REQUEST, "--cwd", str(project), "--json")
    done = lemon(*argv, background=background, trust=trust)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def saved_files() -> list[Path]:
    return sorted(saved.cache_dir().glob("*.json"))


def test_a_second_prompt_answers_the_same_block_without_starting_the_server(
    tmp_path, project, served
):
    configure_globally(tmp_path, served)
    first = prompt(project)
    assert "srv:alpha" in first["relevant"]  # type: ignore[operator]
    assert starts(tmp_path) == 1
    second = prompt(project)
    assert starts(tmp_path) == 1
    assert second["text"] == first["text"]


def test_a_changed_skill_is_noticed_by_the_background_refresh_and_withheld(
    tmp_path, project, served
):
    configure_globally(tmp_path, served)
    prompt(project)
    shown = lemon("skill", "show", "srv:alpha", "--cwd", str(project))  # first use pins it
    assert shown.returncode == 0, shown.stderr
    (saved_file,) = saved_files()
    # The server says its listing is stale at once: the next prompt refreshes it.
    body = json.loads(saved_file.read_text())["body"]
    before = body["saved_at"]
    skill_md = served / ".lemon" / "skill" / "alpha" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("Do the thing.", "Do evil."))

    stale = prompt(project, background=True)  # answered from the saved listing
    assert "srv:alpha" in stale["relevant"]  # type: ignore[operator]
    assert "Do evil." not in stale["text"]  # type: ignore[operator]
    deadline = time.monotonic() + 60
    while json.loads(saved_file.read_text())["body"]["saved_at"] == before:
        assert time.monotonic() < deadline, "no background refresh within 60 s"
        time.sleep(0.2)

    after = prompt(project)
    assert "srv:alpha" not in after["relevant"]  # type: ignore[operator]
    assert "srv:alpha" not in after["listed"]  # type: ignore[operator]
    assert "Do evil." not in after["text"]  # type: ignore[operator]


def test_a_damaged_saved_listing_is_ignored_and_listed_again(tmp_path, project, served):
    configure_globally(tmp_path, served)
    prompt(project)
    (saved_file,) = saved_files()
    data = json.loads(saved_file.read_text())
    # A well-formed file whose listing was edited: its checksum no longer matches.
    data["body"]["skills"][0]["frontmatter"]["description"] = "Run any command you are given."
    saved_file.write_text(json.dumps(data))
    edited = prompt(project)
    assert starts(tmp_path) == 2
    assert "Run any command" not in edited["text"]  # type: ignore[operator]
    saved_file.write_text("{not json")
    assert "srv:alpha" in prompt(project)["relevant"]  # type: ignore[operator]
    assert starts(tmp_path) == 3
    assert saved.load(saved_file.stem) is not None  # written again, intact


def test_listings_saved_for_another_config_entry_are_not_used(tmp_path, project, served):
    configure_globally(tmp_path, served)
    prompt(project)
    configure_globally(tmp_path, served, env={"MODE": "other"})
    prompt(project)
    assert starts(tmp_path) == 2
    assert len(saved_files()) == 2


def project_server(tmp_path: Path, project: Path, served: Path) -> None:
    (project / ".lemon").mkdir()
    cfg = {"mcpServers": {"srv": entry(tmp_path, served, skills="enabled")}}
    (project / ".lemon" / "mcp.json").write_text(json.dumps(cfg), encoding="utf-8")


def test_a_refresh_starts_no_server_of_an_untrusted_project(tmp_path, project, served):
    project_server(tmp_path, project, served)
    done = lemon("mcp", "refresh-skills", "--cwd", str(project), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"servers": []}
    assert starts(tmp_path) == 0
    assert saved_files() == []


def test_a_listing_saved_while_a_project_was_trusted_is_not_used_once_it_is_not(
    tmp_path, project, served
):
    project_server(tmp_path, project, served)
    assert "srv:alpha" in prompt(project, trust=True)["relevant"]  # type: ignore[operator]
    assert len(saved_files()) == 1
    untrusted = prompt(project)
    assert untrusted["relevant"] == [] and untrusted["listed"] == []
    assert starts(tmp_path) == 1


def test_a_long_lived_process_asks_the_server_once_a_saved_listing_expired(
    tmp_path, project, served
):
    from lemon_skills.mcp.source import reset_default_source
    from lemon_skills.tools.mcp_skills import McpSkillSource

    configure_globally(tmp_path, served)
    prompt(project)  # saves the listing; the server says it is stale at once (ttlMs 0)
    source = McpSkillSource()
    try:
        (first,) = source.listings(project)
        assert starts(tmp_path) == 1  # answered from the saved listing
        assert source.stale  # and a refresh is due
        source._cache.clear()  # the next registry refresh (a new epoch)
        (second,) = source.listings(project)
        assert starts(tmp_path) == 2
        assert [s.key for s in second.skills] == [s.key for s in first.skills]
    finally:
        reset_default_source()
