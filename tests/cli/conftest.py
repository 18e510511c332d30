"""Fixtures for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.mcp import configure_project


@pytest.fixture
def configured(project: Path, in_memory: None, trusted_projects: None) -> Path:
    """A project whose mcp.json names the smoke (``fx``) and rich (``rich``) fixtures, served
    in this process."""
    return configure_project(project)
