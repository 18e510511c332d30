"""Peer interoperability with fastmcp's skills support (SEP-2640), both ways, real processes:
fastmcp's client downloads and verifies the skills ``lemon mcp serve`` publishes, and lemon
consumes the skills of a fastmcp server built on ``SkillsDirectoryProvider``.

fastmcp comes with the ``integration`` extra (``pip install -e '.[dev,integration]'``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import lemon_skills
from lemon_skills.mcp.source import reset_default_source
from lemon_skills.tools.read import read_skill
from tests.helpers.skills import write_skill

pytestmark = pytest.mark.integration

GUIDE = "# Guide\n\nRun git log --oneline since the last tag.\n"

# fastmcp's own client, in a process of its own: list the skills (extension negotiated), then
# read_skill, which fetches every listed file and checks its size, digest and frontmatter,
# and writes the skill out as a folder.
FASTMCP_CLIENT = textwrap.dedent(
    """
    import asyncio, json, sys
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from fastmcp.skills.client import SkillsClientExtension

    async def main():
        served, home, out = sys.argv[1:4]
        t = StdioTransport(
            command=sys.executable,
            args=["-m", "lemon_skills", "mcp", "serve", "--cwd", served],
            env={"HOME": home},
        )
        async with Client(t, extensions=[SkillsClientExtension()]) as c:
            listed = await c.list_skills()
            uris = sorted(str(s.uri) for s in listed)
            for uri in uris:
                skill = await c.read_skill(uri)
                skill.to_directory(f"{out}/{skill.name}")
        print(json.dumps(uris))

    asyncio.run(main())
    """
)

FASTMCP_SERVER = textwrap.dedent(
    """
    import sys
    from fastmcp import FastMCP
    from fastmcp.skills.provider import SkillsDirectoryProvider

    mcp = FastMCP("fm")
    mcp.add_provider(SkillsDirectoryProvider(sys.argv[1]))
    mcp.run(show_banner=False)
    """
)


@pytest.fixture(autouse=True)
def fresh_source():
    yield
    reset_default_source()


def test_fastmcp_client_downloads_verified_skills_from_lemon_mcp_serve(tmp_path: Path, home):
    served = tmp_path / "served"
    notes = write_skill(
        served / ".lemon" / "skill", "release-notes", description="Write release notes."
    )
    (notes / "references").mkdir()
    (notes / "references" / "guide.md").write_text(GUIDE)
    write_skill(served / ".lemon" / "skill", "pdf-tools", description="Fill PDF forms.")
    client = tmp_path / "fm_client.py"
    client.write_text(FASTMCP_CLIENT)
    out = tmp_path / "downloaded"
    run = subprocess.run(
        [sys.executable, str(client), str(served), str(home), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == [
        "skill://pdf-tools/SKILL.md",
        "skill://release-notes/SKILL.md",
    ]
    # Every file arrived byte for byte, supporting files included.
    for name in ("release-notes", "pdf-tools"):
        src = served / ".lemon" / "skill" / name
        got = {p.relative_to(out / name).as_posix() for p in (out / name).rglob("*") if p.is_file()}
        assert got == {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()}
        for rel in got:
            assert (out / name / rel).read_bytes() == (src / rel).read_bytes()


def test_lemon_consumes_the_skills_of_a_fastmcp_server(tmp_path: Path, project, trusted_projects):
    skills_dir = tmp_path / "fm-skills"
    pdf = write_skill(skills_dir, "pdf-tools", description="Fill and merge PDF forms.")
    (pdf / "references").mkdir()
    (pdf / "references" / "guide.md").write_text(GUIDE)
    server = tmp_path / "fm_server.py"
    server.write_text(FASTMCP_SERVER)
    entry = {"command": sys.executable, "args": [str(server), str(skills_dir)]}
    (project / ".lemon").mkdir()
    (project / ".lemon" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"fm": {**entry, "skills": "enabled"}}})
    )
    listed = {e.key: e for e in lemon_skills.list(cwd=project) if e.source == "mcp"}
    assert list(listed) == ["fm:pdf-tools"]
    assert listed["fm:pdf-tools"].description == "Fill and merge PDF forms."
    ctx = lemon_skills.ToolContext(cwd=project)
    full = read_skill.call({"key": "fm:pdf-tools"}, ctx)
    assert not full.is_error, full.text
    assert "MCP server 'fm'" in full.text and "Do the thing." in full.text
    guide = read_skill.call(
        {"key": "fm:pdf-tools", "view": "file", "path": "references/guide.md"}, ctx
    )
    assert not guide.is_error, guide.text
    assert "Run git log --oneline since the last tag." in guide.text
