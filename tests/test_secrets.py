from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator

import keyring
import keyring.backend
import pytest
from keyring.backends import chainer, fail, null
from keyring.errors import PasswordDeleteError

from lemon_skills import secrets
from lemon_skills.errors import ConfigError


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring backend that keeps passwords in a dict (a usable, priority-1 backend)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.store.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(fail.Keyring())


def test_without_a_usable_keyring_secrets_go_to_a_private_file(agent_dir):
    secrets.set("mcp_token", "s3cr3t-value", provider="mcp_oauth")
    path = agent_dir / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1
    assert data["secrets"]["mcp_token"]["value"] == "s3cr3t-value"
    assert data["secrets"]["mcp_token"]["provider"] == "mcp_oauth"
    assert secrets.get("mcp_token") == "s3cr3t-value"
    assert secrets.backend().name == f"file:{path}"


def test_delete_removes_only_that_secret(agent_dir):
    secrets.set("a", "1")
    secrets.set("b", "2")
    assert secrets.delete("a") is True
    assert secrets.delete("a") is False
    assert secrets.get("a") is None
    assert secrets.get("b") == "2"


def test_nothing_is_written_until_a_secret_is_set(agent_dir):
    assert secrets.get("missing") is None
    assert secrets.delete("missing") is False
    assert not (agent_dir / "secrets.json").exists()


def test_a_loose_existing_file_is_tightened_on_write(agent_dir):
    path = agent_dir / "secrets.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "secrets": {}}', encoding="utf-8")
    os.chmod(path, 0o644)
    secrets.set("x", "y")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_corrupt_file_is_reported_without_its_contents(agent_dir):
    path = agent_dir / "secrets.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"secrets": {"t": {"value": "leaky-token"', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        secrets.get("t")
    assert "leaky-token" not in str(err.value)
    with pytest.raises(ConfigError):
        secrets.set("t", "new")
    assert "leaky-token" in path.read_text(encoding="utf-8")


def test_env_fallback_only_when_asked(agent_dir, monkeypatch):
    monkeypatch.setenv("GITHUB_OAUTH_SECRET", "from-env")
    assert secrets.get("github-oauth.secret") is None
    assert secrets.get("github-oauth.secret", env_fallback=True) == "from-env"
    monkeypatch.setenv("github-oauth.secret", "exact-name")
    assert secrets.get("github-oauth.secret", env_fallback=True) == "exact-name"
    secrets.set("github-oauth.secret", "stored")
    assert secrets.get("github-oauth.secret", env_fallback=True) == "stored"


def test_a_usable_keyring_is_preferred_and_no_file_is_created(agent_dir, memory_keyring):
    secrets.set("tok", "kr-value", provider="mcp_oauth")
    assert memory_keyring.store == {(secrets.KEYRING_SERVICE, "tok"): "kr-value"}
    assert secrets.get("tok") == "kr-value"
    assert secrets.backend().name.startswith("keyring:")
    assert secrets.delete("tok") is True
    assert secrets.delete("tok") is False
    assert not (agent_dir / "secrets.json").exists()


@pytest.mark.parametrize(
    "unusable",
    [fail.Keyring(), null.Keyring(), chainer.ChainerBackend()],
    ids=["fail", "null", "empty-chainer"],
)
def test_fail_null_and_empty_chainer_backends_are_not_usable(agent_dir, unusable, monkeypatch):
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [], raising=False)
    keyring.set_keyring(unusable)
    try:
        assert secrets.usable_keyring() is None
        secrets.set("k", "v")
        assert (agent_dir / "secrets.json").exists()
    finally:
        keyring.set_keyring(fail.Keyring())


def test_the_backend_can_be_forced(agent_dir, memory_keyring, monkeypatch):
    monkeypatch.setenv("LEMON_SECRETS_BACKEND", "file")
    secrets.set("forced", "v")
    assert memory_keyring.store == {}
    assert (agent_dir / "secrets.json").exists()
    monkeypatch.setenv("LEMON_SECRETS_BACKEND", "bogus")
    with pytest.raises(ConfigError, match="unknown secrets backend"):
        secrets.get("forced")


def test_demanding_a_keyring_without_one_is_an_error(agent_dir, monkeypatch):
    monkeypatch.setenv("LEMON_SECRETS_BACKEND", "keyring")
    with pytest.raises(ConfigError, match="no usable keyring"):
        secrets.set("x", "y")


def test_concurrent_writers_in_two_processes_lose_nothing(agent_dir):
    script = (
        "import sys\nfrom lemon_skills import secrets\n"
        "for i in range(15): secrets.set(f'{sys.argv[1]}-{i}', str(i))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, tag], env=dict(os.environ))
        for tag in ("p", "q")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    data = json.loads((agent_dir / "secrets.json").read_text(encoding="utf-8"))
    assert len(data["secrets"]) == 30
