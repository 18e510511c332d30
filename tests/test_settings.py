from __future__ import annotations

import pytest

from lemon_skills import settings


def test_defaults_before_configure():
    current = settings.settings()
    assert current.mcp_servers is None
    assert current.mcp_disabled is False
    assert settings.mcp_server_names(None) is None


def test_configure_changes_only_the_given_keys_and_bumps_the_generation():
    before = settings.configure(mcp_servers=[{"name": "a", "command": "x"}])
    after = settings.configure(mcp_cache_ttl_ms=5)
    assert after.mcp_servers == ({"name": "a", "command": "x"},)
    assert after.mcp_cache_ttl_ms == 5
    assert after.generation > before.generation
    assert settings.settings() == after


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10"])
def test_durations_must_be_positive_integers(bad):
    with pytest.raises(ValueError, match="mcp_refresh_interval_ms"):
        settings.configure(mcp_refresh_interval_ms=bad)


def test_server_names_come_from_the_injected_provider(tmp_path):
    settings.configure(mcp_server_names=lambda cwd: ["git", "git", str(cwd)])
    assert settings.mcp_server_names(tmp_path) == frozenset({"git", str(tmp_path)})


def test_reset_goes_back_to_defaults_with_a_new_generation():
    configured = settings.configure(mcp_disabled=True)
    settings.reset()
    assert settings.settings().mcp_disabled is False
    assert settings.settings().generation > configured.generation
