"""What a client of ``lemon mcp serve`` can read: only the served skills and their listed files,
as they were listed (a file swapped for a symlink is refused), with paths relative to the skill;
and a skill whose frontmatter only lemon's lenient reading accepts is served, normalised."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from lemon_skills import _yaml
from lemon_skills.cli import main
from lemon_skills.skills import api
from lemon_skills.skills.format.frontmatter import split_frontmatter
from lemon_skills.tool import ToolContext
from lemon_skills.tools.read import read_skill
from lemon_skills.tools.serve.server import Options, SkillServer
from tests.helpers.skills import write_skill


def call(server: SkillServer, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    out = anyio.run(server._call_tool, None, SimpleNamespace(name=name, arguments=args))
    return out.content[0].text, bool(out.is_error)


def read_resource(server: SkillServer, uri: str) -> Any:
    return anyio.run(server._read_resource, None, SimpleNamespace(uri=uri))


@pytest.fixture
def demo(project_skills: Path) -> Path:
    d = write_skill(project_skills, "demo", description="Deploy the demo service.")
    (d / ".env").write_text("API_KEY=hunter2\n")
    (d / ".git").mkdir()
    (d / ".git" / "config").write_text("[remote]\n\turl = https://user:pw@host/x\n")
    (d / "guide.md").write_text("The guide.\n")
    return d


def test_dot_files_are_neither_listed_nor_readable(project: Path, demo: Path):
    server = SkillServer(Options(cwd=project))
    uris = {f.uri for s in server.catalog.skills.values() for f in s.files}
    assert uris == {"skill://demo/SKILL.md", "skill://demo/guide.md"}
    for path in (".env", ".git/config", "./.env", "guide.md/../.env", "sub/../.env"):
        text, is_error = call(server, "read_skill", {"key": "demo", "view": "file", "path": path})
        assert is_error and "hunter2" not in text and "pw@" not in text, path
    with pytest.raises(MCPError):
        read_resource(server, "skill://demo/.env")
    # The agent-side read_skill refuses hidden files as well.
    ctx = ToolContext(cwd=project)
    out = read_skill.call({"key": "demo", "view": "file", "path": ".env"}, ctx)
    assert out.is_error and "hunter2" not in out.text


def test_a_disabled_skill_is_not_readable_through_the_server(project: Path, demo: Path):
    write_skill(demo.parent, "secret-plan", description="Internal plan.", body="TOP SECRET\n")
    api.disable("secret-plan", cwd=project)
    server = SkillServer(Options(cwd=project))
    text, is_error = call(server, "read_skill", {"key": "secret-plan"})
    assert is_error and "TOP SECRET" not in text and "Skill not found" in text
    found, _ = call(server, "find_skills", {"query": "internal plan"})
    assert "secret-plan" not in found


def test_a_file_swapped_for_a_symlink_is_not_read_through_it(
    project: Path, demo: Path, tmp_path: Path
):
    secret = tmp_path / "secret.txt"
    secret.write_text("The guide!\n")  # the same size as guide.md
    server = SkillServer(Options(cwd=project))
    assert (
        "The guide."
        in call(server, "read_skill", {"key": "demo", "view": "file", "path": "guide.md"})[0]
    )
    (demo / "guide.md").unlink()
    os.symlink(secret, demo / "guide.md")
    text, is_error = call(server, "read_skill", {"key": "demo", "view": "file", "path": "guide.md"})
    assert is_error and "The guide!" not in text
    # A symlink to the very same bytes: the digest matches, O_NOFOLLOW still refuses it.
    secret.write_text("The guide.\n")
    text, is_error = call(server, "read_skill", {"key": "demo", "view": "file", "path": "guide.md"})
    assert is_error and "cannot be read" in text
    with pytest.raises(MCPError, match="no such resource"):
        read_resource(server, "skill://demo/guide.md")
    assert "skill://demo/guide.md" not in server.catalog.files  # a symlink is never served


def test_an_edited_file_is_served_as_listed_anew(project: Path, demo: Path):
    server = SkillServer(Options(cwd=project))
    generation = server.catalog.generation
    (demo / "guide.md").write_text("Edited guide, longer.\n")
    assert "Edited" in read_resource(server, "skill://demo/guide.md").contents[0].text
    assert server.catalog.generation == generation + 1  # and list_changed went out


def test_served_reads_show_paths_relative_to_the_skill(project: Path, demo: Path, home: Path):
    server = SkillServer(Options(cwd=project))
    for view in ("full", "summary", "file"):
        text, is_error = call(
            server, "read_skill", {"key": "demo", "view": view, "path": "guide.md"}
        )
        assert not is_error
        assert str(project) not in text and str(home) not in text and os.sep + "tmp" not in text
        assert "skill://demo/" in text
    prompt = anyio.run(server._get_prompt, None, SimpleNamespace(name="demo", arguments=None))
    assert str(project) not in prompt.messages[0].content.text


LENIENT = (
    "---\nname: colon\ndescription: Deploy: the service, with a colon\n---\n\n# Colon\n\nBody.\n"
)


def test_a_skill_with_an_unquoted_colon_is_served_normalised(
    project: Path, project_skills: Path, capsys: pytest.CaptureFixture[str]
):
    write_skill(project_skills, "colon", text=LENIENT)
    server = SkillServer(Options(cwd=project))
    skill = server.catalog.skills["skill://colon/SKILL.md"]
    assert skill.frontmatter["description"] == "Deploy: the service, with a colon"
    text = read_resource(server, "skill://colon/SKILL.md").contents[0].text
    split = split_frontmatter(text)
    assert _yaml.safe_load(split.frontmatter) == skill.frontmatter  # strict YAML now
    assert split.body.startswith("# Colon")
    (res,) = skill.listed["resources"]
    assert res["digest"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert res["size"] == len(text.encode())
    # --check says which skills are served normalised, and why.
    assert main(["mcp", "serve", "--check", "--cwd", str(project)]) == 0
    out = capsys.readouterr().out
    assert "1 served with normalised frontmatter" in out and "colon:" in out
