"""CPU the LangChain and Anthropic adapters add per model turn, beside what lemon's own per-request
work (ranking skills and tools, rendering the block) costs.

    python benchmarks/adapter_overhead_langchain_anthropic.py [--queries 60]

Setup (not timed): the bench skills as a project, and the 362-tool fixture server of the tests
(tests/integrations/servers/big.py) in a throwaway global mcp.json, listed once. Then for each
bench query, in one process:

* ``lemon turn`` (the anchor) - ``Lemon.turn(query)`` the first time: lemon's ranking and render;
* ``langchain`` - the middleware's ``awrap_model_call`` for that query at a later step of the run
  (a tool call and its result in the history), with a model handler that returns at once: the
  message scan, converting the turn's tools to LangChain tools, the request override;
* ``anthropic`` - ``toolkit.turn(query)`` and every tool definition it hands the runner
  (``to_dict`` of the offered and the deferred tools), plus ``held()`` on a reply.

The adapters reuse lemon's turn for the same request, so their rows are what they add on top of
the anchor. CPU milliseconds (p50, p95, max) via ``time.process_time``; target: <= 5 ms.
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
from typing import Any

from corpus import bench_root, make_corpus

from lemon_skills.search.metrics import load_cases

BIG_SERVER = Path(__file__).resolve().parents[1] / "tests" / "integrations" / "servers" / "big.py"


def _configure(root: Path) -> Path:
    """A project of bench skills and the 362-tool server in a global mcp.json of ``root``."""
    agent = root / "agent"
    agent.mkdir()
    os.environ["LEMON_AGENT_DIR"] = str(agent)
    entry = {"command": sys.executable, "args": [str(BIG_SERVER), str(root / "marker.txt")]}
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"big": entry}}), "utf-8")
    project = root / "project"
    make_corpus(project, len(list(bench_root().joinpath("skills").iterdir())))
    return project


async def _cpu(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.process_time()
    await fn()
    return (time.process_time() - start) * 1000


def _row(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"{name:<12} p50 {statistics.median(ms):6.2f}  p95 {p95:6.2f}  max {ms[-1]:6.2f} ms CPU"


async def measure(project: Path, queries: list[str]) -> dict[str, list[float]]:
    from anthropic.types.beta import BetaMessage
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from lemon_skills.integrations import anthropic as lemon_anthropic
    from lemon_skills.integrations.langchain import LemonMiddleware
    from lemon_skills.integrations.turn import Lemon

    out: dict[str, list[float]] = {"lemon turn": [], "langchain": [], "anthropic": []}
    async with Lemon(project) as lemon:
        await lemon.turn("warm up: list the servers and build the indexes")
        mw = LemonMiddleware(lemon)
        kit = lemon_anthropic.Toolkit(lemon)
        reply = BetaMessage.model_validate(
            {"id": "m", "type": "message", "role": "assistant", "model": "x",
             "content": [{"type": "tool_use", "id": "t", "name": "read_skill", "input": {}}],
             "stop_reason": "tool_use", "stop_sequence": None,
             "usage": {"input_tokens": 1, "output_tokens": 1}}
        )  # fmt: skip

        async def done(request: Any) -> ModelResponse:
            return ModelResponse(result=[AIMessage("ok")])

        for q in queries:
            out["lemon turn"].append(await _cpu(lambda q=q: lemon.turn(q)))
            history = [
                HumanMessage(q),
                AIMessage("", tool_calls=[{"name": "read_skill", "args": {"key": "x"}, "id": "1"}]),
                ToolMessage("skill text", tool_call_id="1", name="read_skill"),
            ]
            request = ModelRequest(model=None, messages=history, system_prompt="You help.")  # type: ignore[arg-type]
            out["langchain"].append(await _cpu(lambda r=request: mw.awrap_model_call(r, done)))

            async def anthropic_turn(q: str = q) -> None:
                turn = await kit.turn(q)
                [t.to_dict() for t in turn.tools]
                turn.held(reply)

            out["anthropic"].append(await _cpu(anthropic_turn))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    cases = load_cases(bench_root() / "queries_dev.jsonl")
    queries = [c.query for c in cases][: args.queries]
    with tempfile.TemporaryDirectory() as tmp:
        project = _configure(Path(tmp))
        results = asyncio.run(measure(project, queries))
    print(f"{len(queries)} bench queries, 362 MCP tools, bench skills")
    for name, ms in results.items():
        print(_row(name, ms))


if __name__ == "__main__":
    main()
