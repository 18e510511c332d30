"""Framework-neutral agent tools: a name, a description, a JSON-Schema and a call.

A tool never raises into the agent loop: bad parameters, domain errors and crashes all come
back as a ``ToolResult`` with ``is_error=True`` and text the model can act on. Exporters give
the OpenAI (plain or strict), Anthropic and Gemini tool formats; ``parameters`` stays the
original schema, which validates every call. ``estimate_tokens`` is the one estimate of what a
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

from lemon_skills.errors import LemonSkillsError, SchemaConversionError, UsageError
from lemon_skills.tool import schemas

logger = logging.getLogger(__name__)

ToolOrigin = Literal["builtin", "wasm", "extension", "mcp"]
ToolFormat = Literal["openai", "openai-strict", "anthropic", "gemini"]


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
        if problem is not None:
            # Arguments shaped by a converted schema (strict-mode nulls, objects as JSON text).
            restored = schemas.restore_args(self.parameters, args)
            if restored != args and validate_params(self.parameters, restored) is None:
                args, problem = restored, None
        err = (
            ToolResult.error(f"Invalid parameters for {self.name}: {problem}") if problem else None
        )
        return args, ctx or ToolContext(), err

    def to_openai(self, *, strict: bool = False) -> dict[str, Any]:
        """The OpenAI function-tool shape; ``strict`` rewrites the schema for strict mode.

        Raises:
            SchemaConversionError: ``strict`` and the schema cannot be expressed (the reason).
        """
        params = schemas.to_openai_strict(self.parameters) if strict else dict(self.parameters)
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        function["parameters"] = params
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic Messages API tool shape."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": schemas.to_anthropic(self.parameters),
        }

    def to_gemini(self) -> dict[str, Any]:
        """A Gemini function declaration (``parameters`` in its OpenAPI subset).

        Raises:
            SchemaConversionError: the schema cannot be expressed (the reason).
        """
        params = schemas.to_gemini(self.parameters)
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if params.get("properties"):
            out["parameters"] = params
        return out

    def export(self, fmt: ToolFormat) -> dict[str, Any]:
        """The tool in format ``fmt``.

        Raises:
            SchemaConversionError: the schema cannot be expressed in ``fmt``.
        """
        if fmt == "gemini":
            return self.to_gemini()
        if fmt == "anthropic":
            return self.to_anthropic()
        return self.to_openai(strict=fmt == "openai-strict")


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


def to_openai(tools: list[Tool], *, strict: bool = False) -> list[dict[str, Any]]:
    """Export several tools in the OpenAI format; with ``strict``, a tool whose schema cannot
    be expressed is left out (``export_tools`` says which and why)."""
    return export_tools(tools, "openai-strict" if strict else "openai")[0]


def to_gemini(tools: list[Tool]) -> list[dict[str, Any]]:
    """Export several tools as Gemini function declarations, leaving out the unconvertible."""
    return export_tools(tools, "gemini")[0]


@dataclass(frozen=True, slots=True)
class ExcludedTool:
    """A tool left out of an export, and why."""

    name: str
    reason: str


def export_tools(
    tools: list[Tool], fmt: ToolFormat
) -> tuple[list[dict[str, Any]], list[ExcludedTool]]:
    """Every tool in format ``fmt``; one whose schema cannot be expressed is left out with its
    reason instead of failing the whole request."""
    out: list[dict[str, Any]] = []
    excluded: list[ExcludedTool] = []
    for tool in tools:
        try:
            out.append(tool.export(fmt))
        except SchemaConversionError as exc:
            logger.warning("tool %s left out of the %s export: %s", tool.name, fmt, exc)
            excluded.append(ExcludedTool(tool.name, str(exc)))
    return out, excluded


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
