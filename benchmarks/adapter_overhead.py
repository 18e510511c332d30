"""CPU per model turn that the framework adapters add over lemon's own ranking.

    python benchmarks/adapter_overhead.py [--requests 40] [--rounds 5]

One agent dir with one stdio MCP server of 362 tools (tests/integrations/servers/big.py) and
a project of a few skills. Every figure is CPU milliseconds of this process per turn
(``time.process_time``; a loaded machine inflates it less than wall time), the median of
``--rounds`` rounds, each over ``--requests`` distinct requests:

* ``anchor``: ``lemon_skills.prompt.arender(request, tools=True)`` over the same source and
  discovery: what lemon's ranking costs a turn (skills block + the MCP tools chosen);
* ``core``: ``Lemon.turn(request)``, which does the anchor's work plus mode, listing and turn
  bookkeeping;
* ``pydantic_ai``: a model step's calls into the capability (the dynamic instruction and the
  toolset's ``get_tools``), first step of a request (``cold``) and a later step (``warm``);
* ``openai_agents``: a model call's calls into the options (the instructions function and
  every tool's ``is_enabled``, 364 of them, awaited one by one: the task per tool the SDK
  gathers them in is there for plain tools too), cold and warm;
* ``langchain``: the middleware's ``awrap_model_call`` at a step after a tool call (the message
  scan, the turn's tools as LangChain tools, the request override), with a model handler that
  returns at once, cold and warm;
* ``anthropic``: ``toolkit.turn(request)``, every tool definition it hands the tool runner
  (``to_dict`` of the offered and the deferred tools) and ``held()`` on a reply, cold and warm.

The must-hold figure is each adapter's cold turn minus the anchor: target at most 5 ms.
Frameworks that are not installed are skipped with a note.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "integrations" / "servers" / "big.py"
WORDS = (
    "send invoice customer",
    "read metric billing dashboard",
    "erase records table",
    "render chart series",
    "list directory files",
    "git commit changes",
    "current time zone",
    "fetch web page",
    "echo message",
    "weather sensor metric",
)


def setup(tmp: Path) -> Path:
    agent_dir = tmp / "agent"
    agent_dir.mkdir()
    entry = {"command": sys.executable, "args": [str(SERVER), str(tmp / "marker")]}
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"big": entry}}), "utf-8")
    os.environ["LEMON_AGENT_DIR"] = str(agent_dir)
    project = tmp / "project"
    for i, words in enumerate(WORDS):
        skill = project / ".lemon" / "skill" / f"skill-{i}"
        skill.mkdir(parents=True)
        text = (
            f"---\nname: skill-{i}\ndescription: How to {words} well.\n---\n\n# Steps\n\nDo it.\n"
        )
        (skill / "SKILL.md").write_text(text, encoding="utf-8")
    (project / ".git").mkdir()
    return project


def requests(n: int, salt: int) -> list[str]:
    return [f"{WORDS[i % len(WORDS)]} number {salt}-{i}" for i in range(n)]


async def cpu_per_turn(reqs: list[str], turn: Callable[[str], Awaitable[Any]]) -> float:
    start = time.process_time()
    for request in reqs:
        await turn(request)
    return (time.process_time() - start) * 1000 / len(reqs)


async def measure(project: Path, n: int, rounds: int) -> dict[str, list[float]]:
    from lemon_skills.integrations.turn import Lemon
    from lemon_skills.tools.prompt import arender
    from lemon_skills.tools.read import read_skill
    from lemon_skills.tools.registry import ToolRegistry

    out: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        out.setdefault(name, []).append(value)

    lemon = Lemon(project)
    async with lemon:
        await lemon.turn("warm up")
        registry = ToolRegistry(builtins=[read_skill], mcp_source=lemon.source)
        pai = _pydantic_ai(lemon)
        oai = await _openai_agents(lemon)
        lc = _langchain(lemon)
        ant = _anthropic(lemon)
        for r in range(rounds):

            async def anchor(q: str) -> Any:
                return await arender(q, tools=True, registry=registry, cwd=project)

            add("anchor", await cpu_per_turn(requests(n, 10 * r), anchor))
            add("core", await cpu_per_turn(requests(n, 10 * r + 1), lemon.turn))
            adapters = (("pydantic_ai", pai), ("openai_agents", oai), ("langchain", lc),
                        ("anthropic", ant))  # fmt: skip
            for salt, (name, step) in enumerate(adapters, start=2):
                if step is None:
                    continue
                reqs = requests(n, 10 * r + salt)
                add(f"{name} cold", await cpu_per_turn(reqs, step))
                add(f"{name} warm", await cpu_per_turn(reqs, step))
    return out


def _pydantic_ai(lemon: Any) -> Callable[[str], Awaitable[Any]] | None:
    try:
        from lemon_skills.integrations.pydantic_ai import LemonToolset, capability
    except ImportError:
        print("pydantic_ai: not installed, skipped")
        return None
    from pydantic_ai.capabilities import Capability

    cap = capability(lemon=lemon)
    inner = next(c for c in cap.capabilities if isinstance(c, Capability))  # type: ignore[attr-defined]
    instructions = inner.get_instructions()[0]
    toolset = next(t for t in inner.toolsets if isinstance(t, LemonToolset))

    async def step(request: str) -> Any:
        ctx = SimpleNamespace(prompt=request, messages=[])
        await instructions(ctx)
        return await toolset.get_tools(ctx)  # type: ignore[arg-type]

    return step


async def _openai_agents(lemon: Any) -> Callable[[str], Awaitable[Any]] | None:
    try:
        from lemon_skills.integrations.openai_agents import aagent_options
    except ImportError:
        print("openai_agents: not installed, skipped")
        return None
    options = await aagent_options(lemon=lemon)

    async def step(request: str) -> Any:
        ctx = SimpleNamespace(turn_input=[{"role": "user", "content": request}])
        await options["instructions"](ctx, None)
        # The SDK wraps every tool's check in a task and gathers them, callable or not; that
        # is its own cost, so only the checks themselves are timed here.
        return [await t.is_enabled(ctx, None) for t in options["tools"] if callable(t.is_enabled)]

    return step


def _langchain(lemon: Any) -> Callable[[str], Awaitable[Any]] | None:
    try:
        from lemon_skills.integrations.langchain import LemonMiddleware
    except ImportError:
        print("langchain: not installed, skipped")
        return None
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    middleware = LemonMiddleware(lemon)
    asked = AIMessage("", tool_calls=[{"name": "read_skill", "args": {"key": "x"}, "id": "1"}])
    answer = ToolMessage("skill text", tool_call_id="1", name="read_skill")

    async def model(request: Any) -> Any:
        return ModelResponse(result=[AIMessage("ok")])

    async def step(request: str) -> Any:
        history = [HumanMessage(request), asked, answer]
        call = ModelRequest(model=None, messages=history, system_prompt="You help.")  # type: ignore[arg-type]
        return await middleware.awrap_model_call(call, model)

    return step


def _anthropic(lemon: Any) -> Callable[[str], Awaitable[Any]] | None:
    try:
        from lemon_skills.integrations.anthropic import Toolkit
    except ImportError:
        print("anthropic: not installed, skipped")
        return None
    from anthropic.types.beta import BetaMessage

    kit = Toolkit(lemon)
    reply = BetaMessage.model_validate(
        {"id": "m", "type": "message", "role": "assistant", "model": "x",
         "content": [{"type": "tool_use", "id": "t", "name": "read_skill", "input": {}}],
         "stop_reason": "tool_use", "stop_sequence": None,
         "usage": {"input_tokens": 1, "output_tokens": 1}}
    )  # fmt: skip

    async def step(request: str) -> Any:
        turn = await kit.turn(request)
        sent = [t.to_dict() for t in turn.tools]
        return sent, turn.held(reply)

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = setup(Path(tmp))
        figures = asyncio.run(measure(project, args.requests, args.rounds))
    print(f"load average {os.getloadavg()[0]:.2f}; CPU ms per turn, median of {args.rounds}")
    med = {k: statistics.median(v) for k, v in figures.items()}
    for name, value in med.items():
        print(
            f"  {name:<20} {value:8.3f}   (range {min(figures[name]):.3f}-{max(figures[name]):.3f})"
        )
    for name in ("core", "pydantic_ai cold", "openai_agents cold", "langchain cold",
                 "anthropic cold"):  # fmt: skip
        if name in med:
            extra = med[name] - med["anchor"]
            verdict = "ok" if extra <= 5 else "OVER the 5 ms target"
            print(f"  {name} - anchor = {extra:+.3f} ms ({verdict})")


if __name__ == "__main__":
    main()
