"""lemon's skills and MCP tools for the Anthropic SDK's tool runner.

    from lemon_skills.integrations import anthropic as lemon

    kit = lemon.toolkit(cwd=project)
    turn = await kit.turn(request)
    runner = client.beta.messages.tool_runner(
        model=MODEL, max_tokens=1024, system=turn.system, tools=turn.tools,
        messages=[{"role": "user", "content": request}],
    )
    async for message in runner:
        for call in turn.held(message):          # calls lemon's policy holds for a person
            if await ask_the_user(call):          # the app's own UI; no thread waits
                turn.approve(call)
            else:
                turn.reject(call, "the user said no")

Per request, ``turn.system`` is the skills block and ``turn.tools`` are runner tools
(``BetaAsyncBuiltinFunctionTool``): ``read_skill`` (and ``skill_manage``), the MCP tools
chosen for the request and ``tool_search``. The other MCP tools go with them marked
``defer_loading``: the API keeps their definitions out of the model's context until
``tool_search``, which ranks them with lemon's ranker, returns ``tool_reference`` blocks naming
them; from the next turn on the model can call them. That is Anthropic's own client-side tool
search, with lemon's ranker as the search.

Approvals: the tool runner has no pause, but it runs a reply's tool calls only once the loop
body is done with that reply. ``turn.held(message)`` lists the calls of the reply that lemon's
policy holds (the server's ``approve`` / ``approve_tools``, the tool's annotations) and that
nobody decided yet; ``approve`` lets that exact call run once (with ``arguments`` an edited
call runs instead), ``reject`` answers the model with a rejection and the call never reaches
the server. A held call still undecided when the runner gets to it is decided by the
``approve`` callback given to ``toolkit`` (awaited in the runner's own task), or else not run:
the model reads that it needs approval. Nothing waits on lemon's approvals store.
"""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool, ToolError
from anthropic.types.beta import BetaMessage, BetaToolUseBlock

from lemon_skills.integrations import policy, results
from lemon_skills.integrations.turn import Lemon, Turn
from lemon_skills.paths import PathArg
from lemon_skills.tool import Tool, ToolResult
from lemon_skills.tools.deferred import TOOL_SEARCH

if TYPE_CHECKING:
    from anthropic.types.beta import BetaTextBlockParam, BetaToolParam

__all__ = ["LemonTool", "RunnerTurn", "Toolkit", "toolkit"]

#: The app's decision on a held call: True runs it, False or a reason rejects it.
Approve = Callable[[BetaToolUseBlock], "bool | str | Awaitable[bool | str]"]


def toolkit(cwd: PathArg = None, *, approve: Approve | None = None, **options: Any) -> Toolkit:
    """lemon for one agent on the tool runner; ``options`` are ``integrations.turn.Options``'
    (``tool_mode``, ``max_tools``, ``budget``, ``skill_manage``, ``agent``...)."""
    return Toolkit(Lemon(cwd, **options), approve=approve)


class Toolkit:
    """Turns for the tool runner. ``async with kit:`` keeps the MCP connections open for its
    body (else they open on first use and ``aclose()`` stops them)."""

    def __init__(self, lemon: Lemon, *, approve: Approve | None = None) -> None:
        self.lemon = lemon
        self.approve = approve

    async def turn(self, request: str) -> RunnerTurn:
        """The system block and runner tools for ``request`` (one runner run)."""
        return RunnerTurn(self, await self.lemon.turn(request))

    async def __aenter__(self) -> Toolkit:
        await self.lemon.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.lemon.__aexit__(*exc)

    async def aclose(self) -> None:
        """Stop the MCP servers started without ``async with``."""
        await self.lemon.aclose()


class RunnerTurn:
    """One request's ``system`` and ``tools``, and the approval decisions of its run."""

    def __init__(self, kit: Toolkit, turn: Turn) -> None:
        self.kit = kit
        self.turn = turn
        self.deferred = frozenset(turn.deferred)
        offered = [LemonTool(self, t) for t in turn.tools]
        later = [LemonTool(self, turn.mcp[n], deferred=True) for n in turn.deferred]
        self.tools: list[LemonTool] = offered + later
        self._decisions: dict[tuple[str, str], list[tuple[bool, Any]]] = {}

    @property
    def system(self) -> list[BetaTextBlockParam]:
        """The skills block as system content (put the app's own blocks before it)."""
        return [{"type": "text", "text": self.turn.instructions}] if self.turn.instructions else []

    def held(self, message: BetaMessage) -> list[BetaToolUseBlock]:
        """The calls of ``message`` lemon's policy holds that are not decided yet."""
        return [
            b
            for b in message.content
            if isinstance(b, BetaToolUseBlock)
            and self.kit.lemon.needs_approval(b.name)
            and not self._decisions.get(_key(b.name, b.input))
        ]

    def approve(self, call: BetaToolUseBlock, arguments: Mapping[str, Any] | None = None) -> None:
        """Run ``call`` once when the runner gets to it (``arguments``: an edited call)."""
        self._decide(call, True, dict(arguments) if arguments is not None else None)

    def reject(self, call: BetaToolUseBlock, message: str | None = None) -> None:
        """Answer ``call`` with a rejection (``message``: why); it is never run."""
        self._decide(call, False, message)

    def _decide(self, call: BetaToolUseBlock, run: bool, detail: Any) -> None:
        self._decisions.setdefault(_key(call.name, call.input), []).append((run, detail))

    async def run(self, tool: Tool, arguments: object) -> Any:
        """The runner's call of ``tool``: lemon's tool, under lemon's policy."""
        args = dict(arguments) if isinstance(arguments, Mapping) else {}
        lemon = self.kit.lemon
        if not lemon.needs_approval(tool.name):
            result = await lemon.call(tool.name, args)
            return self._search_reply(result) if tool.name == TOOL_SEARCH else _reply(result)
        run, detail = await self._decision(tool.name, args)
        if not run:
            raise ToolError(_text(policy.rejected(tool.name, detail)))
        if detail is None or detail == args:
            return _reply(await lemon.call(tool.name, args, approved=True))
        done = _reply(await lemon.call(tool.name, detail, approved=True))
        note = (
            "A person changed this call before it ran; it ran as "
            f"{tool.name}({json.dumps(detail, default=str)}). Do not repeat your original call."
        )
        return (
            f"{note}\n\n{done}"
            if isinstance(done, str)
            else [{"type": "text", "text": note}, *done]
        )

    async def _decision(self, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
        queue = self._decisions.get(_key(name, args))
        if queue:
            return queue.pop(0)
        if self.kit.approve is None:
            raise ToolError(
                f"{name} needs approval and nobody approved it, so it was not run. Ask the "
                "user to approve it, or do without it."
            )
        call = BetaToolUseBlock(type="tool_use", id="", name=name, input=args)
        verdict = self.kit.approve(call)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return (True, None) if verdict is True else (False, verdict or None)

    def _search_reply(self, result: ToolResult) -> Any:
        """``tool_search``'s answer: ``tool_reference`` blocks, which the API expands into the
        deferred definitions they name, or the text when nothing deferred matched."""
        names = [n for n in result.details.get("names", ()) if n in self.deferred]
        if result.is_error or not names:
            return _reply(result)
        return [{"type": "tool_reference", "tool_name": n} for n in names]


class LemonTool(BetaAsyncBuiltinFunctionTool):
    """A lemon ``Tool`` the tool runner can send and run."""

    def __init__(self, turn: RunnerTurn, tool: Tool, *, deferred: bool = False) -> None:
        self._turn = turn
        self._tool = tool
        self._deferred = deferred

    @property
    def name(self) -> str:
        return self._tool.name

    def to_dict(self) -> BetaToolParam:
        spec: Any = self._tool.to_anthropic()
        if self._deferred:
            spec = {**spec, "defer_loading": True}
        return cast("BetaToolParam", spec)

    async def call(self, input: object) -> Any:
        return await self._turn.run(self._tool, input)


def _reply(result: ToolResult) -> Any:
    """Text, or text and image blocks; an error raises ``ToolError`` so the runner sends it
    with ``is_error`` and carries on."""
    if result.is_error:
        raise ToolError(_text(result))
    parts = results.reply(result)
    if not parts.images:
        return parts.text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": parts.text}] if parts.text else []
    for image in parts.images:
        data = base64.b64encode(image.data).decode("ascii")
        blocks.append(
            {
                "type": "image",
                "source": {"type": "base64", "media_type": image.media_type, "data": data},
            }  # fmt: skip
        )
    return blocks


def _text(result: ToolResult) -> str:
    return results.reply(result).text


def _key(name: str, arguments: object) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True, default=str)
