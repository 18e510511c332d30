"""lemon's own OpenTelemetry spans and metrics, beside the ones the ``mcp`` SDK emits.

The SDK already traces every JSON-RPC request (``MCP send tools/call`` with ``mcp.method.name``
and ``gen_ai.tool.name``); lemon adds what only it knows: how a request was ranked against the
skills and tools, how a prompt was fitted into its budget, and which policy a tool call went
through (``lemon.*`` attributes). A ``lemon.mcp.call`` span wraps the SDK's client span, so the
two nest in one trace.

Only ``opentelemetry-api`` is used here, and only once the host has loaded it: with no tracer or
meter provider set, every function below returns after one look-up, so an unconfigured process
pays nothing. ``configure_from_env`` (the CLI and the gateway call it) installs the SDK's
providers from the standard ``OTEL_*`` variables when the ``otel`` extra is installed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

#: Instrumentation scope of lemon's spans and metrics.
SCOPE = "lemon-skills"

AttrValue = str | bool | int | float | Sequence[str]


class _Quiet:
    """Stands in for a span when nothing records: attributes set on it go nowhere."""

    def set_attribute(self, key: str, value: AttrValue) -> None:
        return None

    def set_attributes(self, attributes: Mapping[str, AttrValue]) -> None:
        return None

    def is_recording(self) -> bool:
        return False


QUIET = _Quiet()


def _trace() -> Any:
    """``opentelemetry.trace`` when a real tracer provider is set, else None.

    Not imported here: a provider can only have been set through that module, and importing
    it in every short-lived ``lemon`` process costs more than the command it observes.
    """
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    # The API's own global, read directly: get_tracer_provider() also consults os.environ on
    # every call, which would be most of an unconfigured MCP call's tracing cost.
    provider = getattr(trace, "_TRACER_PROVIDER", None)
    if provider is None and not hasattr(trace, "_TRACER_PROVIDER"):
        provider = trace.get_tracer_provider()
    if provider is None:
        return None
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return trace


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, AttrValue] | None = None) -> Iterator[Any]:
    """A current span named ``name`` (or ``QUIET`` when nothing records); errors mark it."""
    trace = _trace()
    if trace is None:
        yield QUIET
        return
    tracer = trace.get_tracer(SCOPE)
    with tracer.start_as_current_span(name, attributes=_clean(attributes or {})) as current:
        yield current


def _clean(attributes: Mapping[str, Any]) -> dict[str, AttrValue]:
    out: dict[str, AttrValue] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        else:
            out[key] = [str(v) for v in value]
    return out


def active() -> bool:
    """Whether a tracer or meter provider is set: hot paths skip building spans when not."""
    return _trace() is not None or _meter() is not None


def set_attributes(current: Any, attributes: Mapping[str, Any]) -> None:
    """Add ``attributes`` (None values dropped) to a span from ``span``."""
    if current.is_recording():
        current.set_attributes(_clean(attributes))


def _meter() -> Any:
    metrics = sys.modules.get("opentelemetry.metrics")
    if metrics is None:
        return None
    internal = sys.modules.get("opentelemetry.metrics._internal")
    # As for traces: the API's global read directly, not through os.environ on every call.
    provider = getattr(internal, "_METER_PROVIDER", None)
    if provider is None and not hasattr(internal, "_METER_PROVIDER"):
        provider = metrics.get_meter_provider()
    if provider is None or isinstance(provider, metrics.NoOpMeterProvider):
        return None
    if type(provider).__name__ == "_ProxyMeterProvider":
        return None
    return _instruments(provider)


@functools.lru_cache(maxsize=4)
def _instruments(provider: Any) -> dict[str, Any]:
    meter = provider.get_meter(SCOPE)
    return {
        "lemon.mcp.call.duration": meter.create_histogram(
            "lemon.mcp.call.duration", unit="s", description="MCP tool calls through lemon"
        ),
        "lemon.tool_search.duration": meter.create_histogram(
            "lemon.tool_search.duration", unit="s", description="Ranking MCP tools for a request"
        ),
        "lemon.approvals.pending": meter.create_observable_gauge(
            "lemon.approvals.pending",
            callbacks=[_pending_approvals],
            description="Approvals waiting for a decision (every process of this state)",
        ),
    }


def _pending_approvals(options: Any) -> Iterator[Any]:
    """Read at each export from the approvals store, so every process reports one truth."""
    from opentelemetry.metrics import Observation

    from lemon_skills.approvals import list_approvals
    from lemon_skills.errors import LemonSkillsError

    try:
        yield Observation(len(list_approvals(status="pending")))
    except LemonSkillsError:  # an unreadable store is reported by the commands, not here
        return


def record(name: str, value: float, attributes: Mapping[str, Any] | None = None) -> None:
    """Record ``value`` on the histogram ``name``."""
    instruments = _meter()
    if instruments is not None:
        instruments[name].record(value, _clean(attributes or {}))


def watch_approvals() -> None:
    """Start reporting ``lemon.approvals.pending`` (a process that serves approvals calls it)."""
    _meter()


#: Exporter names of ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` this module knows.
EXPORTERS = ("console", "otlp", "none")


def configure_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """Install the SDK's tracer and meter providers from the ``OTEL_*`` variables.

    Does nothing (returns ``[]``) unless ``OTEL_TRACES_EXPORTER``, ``OTEL_METRICS_EXPORTER`` or
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set and ``opentelemetry-sdk`` is installed, or when the
    host already set providers of its own. Returns what it installed, e.g.
    ``["traces:console"]``. ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` name the
    resource as the SDK reads them.
    """
    env = os.environ if environ is None else environ
    traces = _wanted(env, "OTEL_TRACES_EXPORTER")
    metrics = _wanted(env, "OTEL_METRICS_EXPORTER")
    if not traces and not metrics:
        return []
    try:
        from opentelemetry import metrics as otel_metrics
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
    except ImportError:
        return []
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "lemon"})
    done: list[str] = []
    if traces and _trace() is None:
        provider = _tracer_provider(traces, resource)
        if provider is not None:
            trace.set_tracer_provider(provider)
            done.append(f"traces:{traces}")
    if metrics and _meter() is None:
        meter_provider = _meter_provider(metrics, resource)
        if meter_provider is not None:
            otel_metrics.set_meter_provider(meter_provider)
            done.append(f"metrics:{metrics}")
    return done


def _wanted(env: Mapping[str, str], name: str) -> str | None:
    value = (env.get(name) or "").strip().lower()
    if not value and env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        value = "otlp"
    return value if value in ("console", "otlp") else None


def _tracer_provider(kind: str, resource: Any) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    provider = TracerProvider(resource=resource)
    if kind == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
        return provider
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        return None
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def _meter_provider(kind: str, resource: Any) -> Any:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    if kind == "console":
        exporter: Any = ConsoleMetricExporter(out=sys.stderr)
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
                OTLPMetricExporter,
            )
        except ImportError:
            return None
        exporter = OTLPMetricExporter()
    return MeterProvider(
        resource=resource, metric_readers=[PeriodicExportingMetricReader(exporter)]
    )


def shutdown() -> None:
    """Flush and stop the providers ``configure_from_env`` installed (at process exit)."""
    for module, getter in (
        ("opentelemetry.trace", "get_tracer_provider"),
        ("opentelemetry.metrics", "get_meter_provider"),
    ):
        mod = sys.modules.get(module)
        provider = getattr(mod, getter)() if mod is not None else None
        stop = getattr(provider, "shutdown", None)
        if callable(stop):
            stop()
