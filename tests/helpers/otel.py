"""OpenTelemetry providers that record into memory, for tests that read spans and metrics."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Switchable(SpanProcessor):
    """Hands finished spans to ``exporter`` while ``enabled``."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter
        self.enabled = True

    def on_end(self, span: ReadableSpan) -> None:
        if self.enabled:
            self.exporter.export([span])


class Recorded:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.processor = Switchable(self.spans)
        self.metrics = InMemoryMetricReader()

    def named(self, name: str) -> list[Any]:
        return [s for s in self.spans.get_finished_spans() if s.name == name]

    def metric_points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        return [
            point
            for rm in (data.resource_metrics if data else [])
            for sm in rm.scope_metrics
            for metric in sm.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]
