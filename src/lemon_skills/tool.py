"""Framework-neutral agent tools: a name, a description, a JSON-Schema and a call.

A tool never raises into the agent loop: bad parameters, domain errors and crashes all come
back as a ``ToolResult`` with ``is_error=True`` and text the model can act on. Exporters give
the OpenAI and Anthropic tool formats; ``estimate_tokens`` is the one estimate of what a
definition or a prompt text costs in model tokens.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import anyio
import jsonschema
import referencing
import referencing.exceptions

from lemon_skills.errors import LemonSkillsError, UsageError

logger = logging.getLogger(__name__)

ToolOrigin = Literal["builtin", "wasm", "extension", "mcp"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """Who is calling: the project dir and the run/session metadata telemetry records."""

    cwd: str | Path | None = None
    tool_call_id: str | None = None
    run_id: str | None = None
    session_key: str | None = None
    session_id: str | None = None
    agent_id: str | None = None

    def metadata(self) -> dict[str, str]:
        """The non-empty session fields, for events and approvals."""
        fields = ("tool_call_id", "run_id", "session_key", "session_id", "agent_id")
        return {f: v for f in fields if (v := getattr(self, f))}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns: text for the model, structured details for the host.

    ``content`` carries rich blocks (``{"type": "image", "data": ..., "mime_type": ...}``,
    embedded resources) beyond the text, in the MCP content-block shape.
    """

    text: str
    details: Mapping[str, Any] = field(default_factory=dict)
    is_error: bool = False
    content: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def error(cls, text: str, **details: Any) -> ToolResult:
        """An error result the model can read."""
        return cls(text, details, is_error=True)


Handler = Callable[[dict[str, Any], ToolContext], "ToolResult | Awaitable[ToolResult]"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """One tool an agent may call. ``handler`` may be sync or async."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Handler = field(repr=False)
    label: str | None = None
    origin: ToolOrigin = "builtin"

    def call(
        self, params: Mapping[str, Any] | None = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run the tool synchronously; never raises for tool-level failures.

        Raises:
            UsageError: an async tool called from inside a running event loop (use ``acall``).
        """
        args, ctx, problem = self._prepare(params, ctx)
        if problem is not None:
            return problem
        try:
            result = self.handler(args, ctx)
            if inspect.isawaitable(result):
                result = _run_awaitable(result)
        except UsageError:
            raise
        except Exception as exc:  # the tool boundary: errors become results the model reads
            return _failure(self.name, exc)
        return result

    async def acall(
        self, params: Mapping[str, Any] | None = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run the tool from async code; sync handlers run in a worker thread."""
        args, ctx, problem = self._prepare(params, ctx)
        if problem is not None:
            return problem
        fn: Callable[..., Any] = self.handler
        try:
            if inspect.iscoroutinefunction(fn):
                outcome = fn(args, ctx)  # no thread hop for async tools (MCP)
            else:
                outcome = await anyio.to_thread.run_sync(fn, args, ctx)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception as exc:  # the tool boundary: errors become results the model reads
            return _failure(self.name, exc)
        return cast(ToolResult, outcome)

    def _prepare(
        self, params: Mapping[str, Any] | None, ctx: ToolContext | None
    ) -> tuple[dict[str, Any], ToolContext, ToolResult | None]:
        args = dict(params or {})
        problem = validate_params(self.parameters, args)
        err = (
            ToolResult.error(f"Invalid parameters for {self.name}: {problem}") if problem else None
        )
        return args, ctx or ToolContext(), err

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI function-tool shape."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic Messages API tool shape."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.parameters),
        }


def validate_params(schema: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
    """Return a one-line reason why ``params`` do not satisfy ``schema``, or None."""
    validator = _validator(schema)
    if validator is None:
        return None  # a server's odd schema must not make its tool uncallable
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(dict(params)))
    except referencing.exceptions.Unresolvable:
        return None  # a $ref outside the schema: the server validates what we cannot
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


#: Resolves ``$ref`` only within the schema itself: a tool's schema is data from a server, and
#: validating arguments must never fetch a URL it names (jsonschema's default registry would).
_LOCAL_ONLY: referencing.Registry[Any] = referencing.Registry()

# Checking a schema costs far more than validating against it; do it once per schema object.
_validators: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _validator(schema: Mapping[str, Any]) -> Any:
    hit = _validators.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    cls = jsonschema.validators.validator_for(dict(schema))
    try:
        cls.check_schema(dict(schema))
        validator = cls(dict(schema), registry=_LOCAL_ONLY)
    except jsonschema.SchemaError:
        validator = None
    if len(_validators) > 4096:
        _validators.clear()
    _validators[id(schema)] = (schema, validator)
    return validator


#: English prose and JSON average about four characters per token in current tokenizers.
CHARS_PER_TOKEN = 4


def estimate_tokens(value: str | Mapping[str, Any] | Sequence[Any]) -> int:
    """Estimated model tokens of ``value``: a text, or a JSON value (a tool definition) as
    compact JSON; rounded up. Every model has its own tokenizer; one fixed ratio is close
    enough to decide what fits and keeps the numbers comparable wherever they are reported
    (deferred tool loading, the prompt budget, the CLI)."""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return -(-len(value) // CHARS_PER_TOKEN)


def to_openai(tools: list[Tool]) -> list[dict[str, Any]]:
    """Export several tools in the OpenAI format."""
    return [t.to_openai() for t in tools]


def to_anthropic(tools: list[Tool]) -> list[dict[str, Any]]:
    """Export several tools in the Anthropic format."""
    return [t.to_anthropic() for t in tools]


def _failure(name: str, exc: Exception) -> ToolResult:
    if isinstance(exc, LemonSkillsError):
        hint = f" ({exc.hint})" if exc.hint else ""
        return ToolResult.error(f"{name} failed: {exc}{hint}", error=type(exc).__name__)
    logger.exception("tool %s crashed", name)
    return ToolResult.error(
        f"{name} failed unexpectedly: {type(exc).__name__}: {exc}", error=type(exc).__name__
    )


def _run_awaitable(awaitable: Awaitable[ToolResult]) -> ToolResult:
    try:
        anyio.get_current_task()
    except RuntimeError:
        pass
    else:
        raise UsageError("this tool is async; call `await tool.acall(...)` inside an event loop")

    async def runner() -> ToolResult:
        return await awaitable

    return anyio.run(runner)
