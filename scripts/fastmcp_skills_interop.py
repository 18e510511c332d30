"""Peer interoperability with fastmcp's SEP-2640 support, both ways (run by hand).

    python scripts/fastmcp_skills_interop.py FASTMCP_PYTHON

FASTMCP_PYTHON is an interpreter with ``fastmcp`` (4.2 or newer) installed; fastmcp is not a
dependency of lemon-skills. The script

1. runs ``lemon mcp serve`` on a temporary project and lists and reads its skills with
   fastmcp's ``Client.list_skills()`` (the Skills extension) from FASTMCP_PYTHON;
2. runs a fastmcp server with ``SkillsDirectoryProvider`` and consumes its skills with lemon
   (``"skills": "enabled"``): ``lemon_skills.list`` and ``read_skill``.

It prints what each side saw and exits 1 when either direction fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

FASTMCP_CLIENT = textwrap.dedent(
    """
    import asyncio, json, sys
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from fastmcp.skills.client import SkillsClientExtension

    async def main():
        args = [sys.argv[2], *sys.argv[4:]]
        t = StdioTransport(command=sys.argv[1], args=args, env={"HOME": sys.argv[3]})
        async with Client(t, extensions=[SkillsClientExtension()]) as c:
            skills = await c.list_skills()
            text = (await c.read_resource(str(skills[0].uri)))[0].text
            print(json.dumps({"uris": sorted(str(s.uri) for s in skills), "read": text}))

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
SKILL = "---\nname: {name}\ndescription: {desc}\n---\n\n# {name}\n\n{body}\n"


def write(root: Path, name: str, desc: str, body: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(SKILL.format(name=name, desc=desc, body=body))


def main() -> int:
    fastmcp_python = sys.argv[1]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "LEMON_AGENT_DIR": str(home / ".lemon/agent")}
        served = base / "served"
        write(served / ".lemon" / "skill", "release-notes", "Write release notes.", "Use git log.")
        client = base / "fm_client.py"
        client.write_text(FASTMCP_CLIENT)
        lemon = [sys.executable, "-m", "lemon_skills", "mcp", "serve", "--cwd", str(served)]
        out = subprocess.run(
            [fastmcp_python, str(client), lemon[0], *lemon[1:2], str(home), *lemon[2:]],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        print("fastmcp client -> lemon mcp serve:", out.stdout.strip() or out.stderr[-500:])
        ok &= '"skill://release-notes/SKILL.md"' in out.stdout and "Use git log." in out.stdout

        skills_dir = base / "fm-skills"
        write(skills_dir, "pdf-tools", "Fill and merge PDF forms.", "Use pdftk to merge.")
        server = base / "fm_server.py"
        server.write_text(FASTMCP_SERVER)
        project = base / "project"
        (project / ".lemon").mkdir(parents=True)
        entry = {"command": fastmcp_python, "args": [str(server), str(skills_dir)]}
        (project / ".lemon" / "mcp.json").write_text(
            json.dumps({"mcpServers": {"fm": {**entry, "skills": "enabled"}}})
        )
        probe = textwrap.dedent(
            f"""
            import lemon_skills
            from lemon_skills.tools.read import read_skill
            keys = [e.key for e in lemon_skills.list(cwd={str(project)!r}) if e.source == "mcp"]
            ctx = lemon_skills.ToolContext(cwd={str(project)!r})
            r = read_skill.call({{"key": "fm:pdf-tools"}}, ctx)
            print(keys, r.is_error, "Use pdftk to merge." in r.text)
            """
        )
        out = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
        )
        print("lemon -> fastmcp SkillsDirectoryProvider:", out.stdout.strip() or out.stderr[-500:])
        ok &= out.stdout.strip() == "['fm:pdf-tools'] False True"
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
