"""The replicas' shared secret: read from a file or the environment, refused when short, and
naming one deployment for every replica that holds it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lemon_skills.errors import InvalidValue
from lemon_skills.gateway.replicas import SECRET_ENV, read_secret


def test_replicas_with_one_secret_name_one_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "secret"
    path.write_text("a" * 40 + "\n")
    monkeypatch.setenv(SECRET_ENV, "a" * 40)
    from_file, from_env = read_secret(path), read_secret(None)
    assert from_file is not None and from_env is not None
    assert from_file.deployment() == from_env.deployment()
    monkeypatch.setenv(SECRET_ENV, "b" * 40)
    other = read_secret(None)
    assert other is not None and other.deployment() != from_file.deployment()
    assert "a" * 8 not in from_file.deployment()
    monkeypatch.delenv(SECRET_ENV)
    assert read_secret(None) is None
    path.write_text("short")
    with pytest.raises(InvalidValue, match="at least 32"):
        read_secret(path)


def test_a_short_secret_stops_the_gateway_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text("short")
    args = ["mcp", "gateway", "--http", "127.0.0.1:0", "--state-secret-file", str(path)]
    done = subprocess.run(
        [sys.executable, "-m", "lemon_skills", *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: the state secret in") and "Traceback" not in done.stderr
