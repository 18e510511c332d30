"""Listing and reading SEP-2640 skills stays bounded whatever a server sends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp import types

from lemon_skills.mcp.skills.client import EXTENSION, list_skills, parse_entries, read_bytes


def entry(i: int) -> dict[str, Any]:
    uri = f"skill://s{i}/SKILL.md"
    return {
        "uri": uri,
        "frontmatter": {"name": f"s{i}", "description": "d"},
        "resources": [{"uri": uri, "digest": "sha256:" + "0" * 64, "size": 10}],
    }


@dataclass
class FakeSession:
    """A server answering skills/list in pages of ``page`` from ``count`` skills."""

    count: int
    page: int = 1000
    text: str = ""
    requests: list[Any] = field(default_factory=list)
    server_capabilities: Any = field(
        default_factory=lambda: types.ServerCapabilities(extensions={EXTENSION: {}})
    )

    async def send_request(self, request: Any, result_type: Any) -> dict[str, Any]:
        self.requests.append(request)
        params = request.model_dump().get("params") or {}
        start = int(params.get("cursor") or 0)
        end = min(start + self.page, self.count)
        out: dict[str, Any] = {"skills": [entry(i) for i in range(start, end)]}
        if end < self.count:
            out["nextCursor"] = str(end)
        return out

    async def read_resource(self, uri: str) -> Any:
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=self.text)]
        )


def test_a_server_listing_10000_skills_is_cut_at_the_limit_with_a_diagnostic():
    session = FakeSession(10_000)
    skills, problems = anyio.run(lambda: list_skills(session, limit=2000))
    assert len(skills) == 2000
    assert problems == ["the server lists more than 2000 skills; only the first 2000 are used"]
    assert len(session.requests) == 3  # pages stop once the limit is passed


def test_pagination_follows_next_cursor():
    skills, problems = anyio.run(lambda: list_skills(FakeSession(25, page=10), limit=100))
    assert [s.uri for s in skills][-1] == "skill://s24/SKILL.md"
    assert len(skills) == 25 and problems == []


def test_a_50_mb_file_is_refused_without_being_kept():
    session = FakeSession(1, text="x" * (50 * 1024 * 1024))
    with pytest.raises(ValueError, match="larger than"):
        anyio.run(lambda: read_bytes(session, "skill://s0/SKILL.md", 4 * 1024 * 1024))


def test_malformed_entries_are_dropped_with_a_reason_and_the_rest_kept():
    good = entry(1)
    skills, problems = parse_entries([good, "nope", {"uri": 3}, {**entry(2), "resources": [{}]}])
    assert [s.uri for s in skills] == [good["uri"]]
    assert len(problems) == 3


def test_a_server_without_the_extension_is_listed_by_the_skill_uri_convention():
    class Old:
        server_capabilities = types.ServerCapabilities(resources=types.ResourcesCapability())

        async def list_resources(self, params: Any = None) -> Any:
            return types.ListResourcesResult(
                resources=[
                    types.Resource(uri="skill://git/SKILL.md", name="git", description="Git."),
                    types.Resource(uri="file:///x", name="x"),
                ]
            )

    skills, _ = anyio.run(lambda: list_skills(Old(), limit=10))
    assert [(s.uri, s.frontmatter, s.files) for s in skills] == [
        ("skill://git/SKILL.md", {"name": "git", "description": "Git."}, None)
    ]


@dataclass
class Garbage(FakeSession):
    """A server whose every page is a million malformed entries, with a cursor forever."""

    async def send_request(self, request: Any, result_type: Any) -> dict[str, Any]:
        self.requests.append(request)
        params = request.model_dump().get("params") or {}
        nxt = int(params.get("cursor") or 0) + 1
        return {"skills": [7] * 1_000_000, "nextCursor": str(nxt)}


@pytest.mark.timeout(30)
def test_pages_of_malformed_entries_count_against_the_limit_and_are_not_all_kept():
    session = Garbage(0)
    skills, problems = anyio.run(lambda: list_skills(session, limit=2000))
    assert skills == []
    assert len(session.requests) == 1  # the first page already passed the limit
    assert len(problems) <= 21
    assert problems[-1].startswith("the server lists more than 2000 skills")
