"""``lemon mcp serve`` over an in-memory MCP connection: the skills extension, resources that
are the listed bytes, the tools it offers (``skill_manage`` only when writing is allowed, and
then every write through the approvals store exactly as the agent tool), change notices."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from pydantic import TypeAdapter

from lemon_skills import approvals
from lemon_skills.tools.serve.server import Options, SkillServer
from tests.helpers.skills import write_skill

RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


class GetParams(types.RequestParams):
    uri: str


@asynccontextmanager
async def connected(server: SkillServer, **client: Any) -> AsyncIterator[ClientSession]:
    srv = server.server
    async with (
        create_client_server_memory_streams() as (ours, theirs),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(lambda: srv.run(theirs[0], theirs[1], srv.create_initialization_options()))
        async with ClientSession(ours[0], ours[1], **client) as session:
            await session.initialize()
            yield session
        tg.cancel_scope.cancel()


def run(server: SkillServer, body: Callable[[ClientSession], Awaitable[None]], **kw: Any) -> None:
    async def main() -> None:
        async with connected(server, **kw) as session:
            await body(session)

    anyio.run(main)


async def skills_list(session: ClientSession) -> list[dict[str, Any]]:
    req = types.Request(method="skills/list", params=types.PaginatedRequestParams())
    listed: list[dict[str, Any]] = (await session.send_request(req, RAW))["skills"]
    return listed


def call_text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture
def served(project: Path, project_skills: Path) -> Path:
    pdf = write_skill(project_skills, "pdf", description="Fill PDF forms with pdftk.")
    (pdf / "references").mkdir()
    (pdf / "references" / "guide.md").write_text("Guide.\n")
    write_skill(project_skills, "notes", name="Release Notes", description="Write release notes.")
    return project


def test_listed_digests_and_sizes_are_those_of_the_bytes_each_read_returns(served):
    async def body(s: ClientSession) -> None:
        listed = await skills_list(s)
        assert sorted(e["uri"] for e in listed) == [
            "skill://notes/SKILL.md",
            "skill://pdf/SKILL.md",
        ]
        for entry in listed:
            for res in entry["resources"]:
                (content,) = (await s.read_resource(res["uri"])).contents
                assert isinstance(content, types.TextResourceContents)
                data = content.text.encode()
                assert res["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
                assert res["size"] == len(data)
        got = await s.send_request(
            types.Request(method="skills/get", params=GetParams(uri="skill://pdf/SKILL.md")), RAW
        )
        assert got["skill"] == next(e for e in listed if e["uri"] == "skill://pdf/SKILL.md")
        with pytest.raises(MCPError) as err:
            await s.send_request(
                types.Request(method="skills/get", params=GetParams(uri="skill://nope/SKILL.md")),
                RAW,
            )
        assert err.value.error.code == -32602

    run(SkillServer(Options(cwd=served)), body)


def test_a_skill_served_under_its_folder_name_reads_as_listed(served):
    async def body(s: ClientSession) -> None:
        entry = next(e for e in await skills_list(s) if e["uri"] == "skill://notes/SKILL.md")
        assert entry["frontmatter"]["name"] == "notes"
        (content,) = (await s.read_resource("skill://notes/SKILL.md")).contents
        assert isinstance(content, types.TextResourceContents)
        assert "name: notes" in content.text and "Release Notes" in content.text

    run(SkillServer(Options(cwd=served)), body)


def tool_names(server: SkillServer) -> list[str]:
    names: list[str] = []

    async def body(s: ClientSession) -> None:
        names.extend(t.name for t in (await s.list_tools()).tools)

    run(server, body)
    return names


def test_skill_manage_is_offered_only_when_writing_is_allowed(served):
    assert tool_names(SkillServer(Options(cwd=served))) == ["find_skills", "read_skill"]
    writable = SkillServer(Options(cwd=served, allow_write=True))
    assert tool_names(writable) == ["find_skills", "read_skill", "skill_manage"]

    async def body(s: ClientSession) -> None:
        r = await s.call_tool("skill_manage", {"action": "delete", "name": "pdf"})
        assert r.is_error and "unknown tool" in call_text(r)

    run(SkillServer(Options(cwd=served)), body)
    assert (served / ".lemon" / "skill" / "pdf" / "SKILL.md").exists()


def skill_md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: Fill PDF forms.\n---\n\n{body}\n"


def test_a_served_write_to_a_skill_the_agent_did_not_create_waits_for_approval(served):
    pdf = served / ".lemon" / "skill" / "pdf" / "SKILL.md"
    before = pdf.read_text()
    edit = {"action": "edit", "name": "pdf", "content": skill_md("pdf", "Do evil.")}

    async def body(s: ClientSession) -> None:
        asked = await s.call_tool("skill_manage", edit)
        assert asked.is_error and "needs the user's approval" in call_text(asked)
        (pending,) = approvals.list_approvals()
        assert pending.tool == "skill_manage" and pending.action["action"] == "edit"
        approvals.deny(pending.id)
        denied = await s.call_tool("skill_manage", {**edit, "approval_id": pending.id})
        assert denied.is_error and "denied" in call_text(denied)
        assert pdf.read_text() == before  # a denied approval changes nothing
        again = await s.call_tool("skill_manage", edit)
        assert again.is_error
        (second,) = approvals.list_approvals()
        approvals.approve(second.id)
        done = await s.call_tool("skill_manage", {**edit, "approval_id": second.id})
        assert not done.is_error, call_text(done)
        assert "Do evil." in pdf.read_text()

    run(SkillServer(Options(cwd=served, allow_write=True)), body)


def test_a_skill_created_through_the_server_is_the_agents_to_change(served):
    async def body(s: ClientSession) -> None:
        created = await s.call_tool(
            "skill_manage", {"action": "create", "name": "mine", "content": skill_md("mine", "A.")}
        )
        assert not created.is_error, call_text(created)
        patched = await s.call_tool(
            "skill_manage",
            {"action": "patch", "name": "mine", "old_string": "A.", "new_string": "B."},
        )
        assert not patched.is_error, call_text(patched)
        assert approvals.list_approvals() == []

    run(SkillServer(Options(cwd=served, allow_write=True)), body)
    assert "B." in (served / ".lemon" / "skill" / "mine" / "SKILL.md").read_text()


def test_skills_only_offers_no_tools(served):
    server = SkillServer(Options(cwd=served, tools=False))

    async def body(s: ClientSession) -> None:
        caps = s.server_capabilities
        assert caps is not None and caps.tools is None
        assert len(await skills_list(s)) == 2

    run(server, body)


def test_find_skills_ranks_with_reasons(served):
    async def body(s: ClientSession) -> None:
        r = await s.call_tool("find_skills", {"query": "fill pdf forms", "limit": 1})
        found = json.loads(call_text(r))
        (best,) = found["matches"]
        assert best["key"] == "pdf" and best["reasons"]
        bad = await s.call_tool("find_skills", {"query": " "})
        assert bad.is_error

    run(SkillServer(Options(cwd=served)), body)


def test_an_added_skill_is_listed_and_announced_to_every_session(served):
    server = SkillServer(Options(cwd=served))
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            seen.append(message.method)

    async def body(s: ClientSession) -> None:
        await skills_list(s)
        assert server.refresh() is False
        write_skill(served / ".lemon" / "skill", "gamma", description="Gamma rays.")
        assert server.refresh() is True
        await server.notify()
        with anyio.fail_after(5):
            while "notifications/resources/list_changed" not in seen:
                await anyio.sleep(0.01)
        assert "skill://gamma/SKILL.md" in {e["uri"] for e in await skills_list(s)}

    run(server, body, message_handler=on_message)
