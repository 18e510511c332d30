"""``lemon mcp serve`` as the official SDK's ``ClientSession`` sees it: the extension, resources
whose bytes match the listed digests, prompts and the find_skills tool."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from tests.helpers.skills import write_skill

EXTENSION = "io.modelcontextprotocol/skills"
RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


class GetParams(types.RequestParams):
    uri: str


def test_the_sdk_client_lists_reads_and_ranks_served_skills(tmp_path: Path, home: Path):
    served = tmp_path / "served"
    skills = served / ".lemon" / "skill"
    write_skill(skills, "alpha", description="Deploy kubernetes clusters with helm.")
    write_skill(skills, "beta", description="Write release notes from git history.")

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "lemon_skills", "mcp", "serve", "--cwd", str(served)],
            env={"HOME": str(home)},
        )
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            caps = s.server_capabilities
            assert caps is not None and EXTENSION in (caps.experimental or {})
            listed = await s.send_request(
                types.Request(method="skills/list", params=types.PaginatedRequestParams()), RAW
            )
            by_uri = {e["uri"]: e for e in listed["skills"]}
            alpha = by_uri["skill://alpha/SKILL.md"]
            assert alpha["frontmatter"]["description"] == "Deploy kubernetes clusters with helm."
            (res,) = alpha["resources"]
            text = (await s.read_resource(res["uri"])).contents[0].text  # type: ignore[union-attr]
            data = text.encode()
            assert res["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert res["size"] == len(data)
            got = await s.send_request(
                types.Request(method="skills/get", params=GetParams(uri=alpha["uri"])), RAW
            )
            assert got["skill"] == alpha
            with pytest.raises(MCPError) as err:
                await s.send_request(
                    types.Request(
                        method="skills/get", params=GetParams(uri="skill://nope/SKILL.md")
                    ),
                    RAW,
                )
            assert err.value.code == -32602
            prompts = {p.name for p in (await s.list_prompts()).prompts}
            assert prompts == {"alpha", "beta"}
            prompt = await s.get_prompt("alpha")
            assert "Do the thing." in prompt.messages[0].content.text  # type: ignore[union-attr]
            found = await s.call_tool("find_skills", {"query": "helm kubernetes deploy"})
            body = json.loads(found.content[0].text)  # type: ignore[union-attr]
            assert body["matches"][0]["key"] == "alpha"
            assert body["matches"][0]["reasons"]

    anyio.run(main)
