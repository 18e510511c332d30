"""Pytest fixtures serving git repositories on 127.0.0.1 (load with ``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.git import Served, serve_daemon, serve_http


@pytest.fixture
def git_http(tmp_path: Path) -> Iterator[Served]:
    """A smart-HTTP git server (``git http-backend``) on 127.0.0.1."""
    root = tmp_path / "served-http"
    root.mkdir()
    yield from serve_http(root)


@pytest.fixture
def git_daemon(tmp_path: Path) -> Iterator[Served]:
    """A ``git daemon`` (git:// protocol) on 127.0.0.1."""
    root = tmp_path / "served-daemon"
    root.mkdir()
    yield from serve_daemon(root)


@pytest.fixture
def github(git_http: Served, monkeypatch: pytest.MonkeyPatch) -> Served:
    """``gh:owner/repo`` pointed at the loopback HTTP server via ``LEMON_GITHUB_BASE``."""
    monkeypatch.setenv("LEMON_GITHUB_BASE", git_http.base)
    return git_http
