"""Test isolation: every test gets its own HOME, agent dir and project; nothing touches ~."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lemon_skills import context

#: The throwaway PostgreSQL server and the ``backend`` fixture the state tests share.
pytest_plugins = ["tests.helpers.postgres"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point HOME and LEMON_AGENT_DIR into tmp_path, turn semantic ranking off and strip every
    other LEMON_* variable."""
    for name in list(os.environ):
        if name.startswith("LEMON_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LEMON_AGENT_DIR", str(home / ".lemon" / "agent"))
    # Ranking is lexical whatever extras this environment has; tests of the semantic extra
    # ask for it (it is used by default once installed).
    monkeypatch.setenv("LEMON_SEMANTIC", "0")
    # Never let a test reach the developer's real keyring: keyring's own "fail" backend.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    context.reset()  # a fresh default context: no registry, store, source or settings carried over
    yield
    context.reset()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The fake home directory of this test."""
    return tmp_path / "home"


@pytest.fixture
def agent_dir(home: Path) -> Path:
    """The agent dir of this test (``$LEMON_AGENT_DIR``)."""
    return home / ".lemon" / "agent"


@pytest.fixture
def global_skills(agent_dir: Path) -> Path:
    """The global skill dir, created."""
    d = agent_dir / "skill"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory (a git root, so the ancestor walk stops here)."""
    p = tmp_path / "project"
    (p / ".git").mkdir(parents=True)
    return p


@pytest.fixture
def trusted_projects(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust every project's ``.lemon/mcp.json`` (``LEMON_TRUST_PROJECT_MCP=1``), for tests
    whose servers are configured there; tests/mcp/config/test_trust.py covers the default."""
    monkeypatch.setenv("LEMON_TRUST_PROJECT_MCP", "1")


@pytest.fixture
def project_skills(project: Path) -> Path:
    """The project's ``.lemon/skill`` dir, created."""
    d = project / ".lemon" / "skill"
    d.mkdir(parents=True)
    return d


@pytest.fixture
def in_memory() -> None:
    """Serve the smoke and rich fixture entries in this process over the SDK's in-memory
    transport (``tests.helpers.mcp.in_process``): the protocol logic without a spawn each."""
    from lemon_skills import settings
    from tests.helpers.mcp import in_process

    settings.configure(mcp_transport_factory=in_process)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Global OpenTelemetry tracer and meter providers recording into memory, for this test
    only (``tests.helpers.otel.Recorded``); the previous globals come back afterwards."""
    import opentelemetry.metrics._internal as metrics_internal
    import opentelemetry.trace as trace_api
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    from tests.helpers.otel import Recorded

    rec = Recorded()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(rec.processor)
    meter_provider = MeterProvider(metric_readers=[rec.metrics])
    monkeypatch.setattr(trace_api, "_TRACER_PROVIDER", tracer_provider)
    monkeypatch.setattr(metrics_internal, "_METER_PROVIDER", meter_provider)
    yield rec
    # Not shut down: tracers the SDK's modules cached keep this provider, and a shut-down one
    # warns on every span of the tests after this one.
    rec.processor.enabled = False
    meter_provider.shutdown()
