"""The framework-neutral core: one request's skills and tools, lemon's approval policy decided
without waiting, and results in framework-neutral parts, against a real 362-tool stdio server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from lemon_skills.errors import UsageError
from lemon_skills.integrations.results import reply
from lemon_skills.integrations.turn import Lemon
from tests.integrations.conftest import DESTRUCTIVE, FOUND, REQUEST


def test_a_turn_names_the_skill_and_defers_most_of_362_tools(project, big_server, invoice_skill):
    async def main() -> None:
        async with Lemon(project) as lemon:
            turn = await lemon.turn(REQUEST)
            names = [t.name for t in turn.tools]
            assert "invoice-chaser" in turn.instructions
            assert names[0] == "read_skill" and "tool_search" in names
            assert len(turn.tools) <= 30 and len(turn.mcp) == 362
            assert len(turn.deferred) == 362 - sum(n.startswith("mcp_") for n in names)
            # The same request at the next step is the same turn (no second ranking).
            assert await lemon.turn(REQUEST) is turn
            read = await lemon.call("read_skill", {"key": "invoice-chaser"})
            assert "Send a reminder" in read.text and not read.is_error
            found = await lemon.search("send an invoice by email to a customer")
            assert found[0].name == FOUND
            later = await lemon.turn(REQUEST, found=[FOUND])
            assert FOUND in [t.name for t in later.tools] and FOUND not in later.deferred

    asyncio.run(main())


def test_tool_mode_all_offers_every_tool(project, big_server):
    async def main() -> None:
        async with Lemon(project, tool_mode="all") as lemon:
            turn = await lemon.turn(REQUEST)
            assert len(turn.tools) == 363 and not turn.deferred

    asyncio.run(main())
    with pytest.raises(UsageError, match="tool_mode"):
        Lemon(project, tool_mode="some")


def test_a_call_that_needs_approval_runs_only_once_approved(project, big_server: Path):
    async def main() -> None:
        async with Lemon(project) as lemon:
            await lemon.turn(REQUEST)
            assert lemon.needs_approval(DESTRUCTIVE) is True
            assert lemon.needs_approval(FOUND) is False
            refused = await lemon.call(DESTRUCTIVE, {"table": "users"})
            assert refused.is_error and "not approved" in refused.text
            assert not big_server.exists()
            done = await lemon.call(DESTRUCTIVE, {"table": "users"}, approved=True)
            assert done.text == "erased users" and not done.is_error
            assert big_server.read_text() == "erased users\n"

    asyncio.run(main())


def test_results_errors_and_images_in_neutral_parts(project, big_server):
    async def main() -> None:
        async with Lemon(project) as lemon:
            chart = reply(await lemon.call("mcp_big_render_chart", {}))
            assert chart.images[0].media_type == "image/png"
            assert chart.images[0].data.startswith(b"\x89PNG")
            assert "chart rendered" in chart.text and not chart.is_error
            bad = reply(await lemon.call(FOUND, {"customer": "ACME"}))
            assert bad.is_error and "amount" in bad.text
            unknown = reply(await lemon.call("mcp_big_nothing", {}))
            assert unknown.is_error and "tool_search" in unknown.text

    asyncio.run(main())


def test_without_async_with_and_from_concurrent_runs(project, big_server: Path, invoice_skill):
    async def run(lemon: Lemon) -> str:
        async with lemon:
            turn = await lemon.turn(REQUEST)
            await asyncio.sleep(0)
            return turn.instructions

    async def main() -> None:
        lemon = Lemon(project)
        # Runs enter and leave in tasks of their own; the connections outlive none of them.
        texts = await asyncio.gather(*(run(lemon) for _ in range(4)))
        assert all("invoice-chaser" in t for t in texts)
        # Without `async with`: the source's own loop, reached from a worker thread.
        loose = Lemon(project)
        turn = await loose.turn(REQUEST)
        assert "tool_search" in [t.name for t in turn.tools]
        done = await loose.call(DESTRUCTIVE, {"table": "t"}, approved=True)
        assert done.text == "erased t"
        await loose.aclose()

    asyncio.run(main())


def test_importing_lemon_and_the_core_loads_no_framework():
    code = (
        "import sys, lemon_skills, lemon_skills.integrations.turn;"
        "import lemon_skills.integrations.policy, lemon_skills.integrations.results;"
        "names = ('pydantic_ai', 'agents', 'langchain', 'anthropic');"
        "bad = [m for m in names if m in sys.modules];"
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
