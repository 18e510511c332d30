"""Named secrets (OAuth tokens, client secrets): the OS keyring when usable, else a 0600 file.

The keyring is optional (``pip install 'lemon-skills[keyring]'``) and used only when its active
backend can really store something: the ``fail`` and ``null`` backends, and a chainer with no
backends, do not count. Otherwise secrets live in ``<agent>/secrets.json``, written atomically
with mode 0600. ``LEMON_SECRETS_BACKEND=file|keyring`` forces a choice. Values never appear in
errors or logs.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from lemon_skills import _fs
from lemon_skills.errors import ConfigError
from lemon_skills.paths import agent_dir

#: The keyring "service" every secret is stored under.
KEYRING_SERVICE = "lemon-skills"
FILE_MODE = 0o600
_FILE_VERSION = 1


class Backend(Protocol):
    """Where secrets are kept."""

    @property
    def name(self) -> str:
        """``file:<path>`` or ``keyring:<backend class>`` (for status output)."""
        ...

    def get(self, name: str) -> str | None:
        """The stored value or None."""
        ...

    def set(self, name: str, value: str, *, provider: str | None) -> None:
        """Store (replace) a value."""
        ...

    def delete(self, name: str) -> bool:
        """Remove a value; False when there was none."""
        ...


@dataclass(frozen=True, slots=True)
class FileBackend:
    """``secrets.json`` under the agent dir, mode 0600, every write atomic and locked."""

    path: Path

    @property
    def name(self) -> str:
        return f"file:{self.path}"

    def get(self, name: str) -> str | None:
        entry = self._read().get(name)
        return entry.get("value") if isinstance(entry, dict) else None

    def set(self, name: str, value: str, *, provider: str | None) -> None:
        def change(data: dict[str, Any]) -> None:
            secrets = data.setdefault("secrets", {})
            secrets[name] = {"value": value, "provider": provider, "updated_at": int(time.time())}

        self._update(change)

    def delete(self, name: str) -> bool:
        existed = False

        def change(data: dict[str, Any]) -> None:
            nonlocal existed
            existed = data.get("secrets", {}).pop(name, None) is not None

        if self.path.exists():
            self._update(change)
        return existed

    def _read(self) -> dict[str, Any]:
        data = _fs.read_json(self.path, default=_empty)
        secrets = data.get("secrets", {})
        if not isinstance(secrets, dict):
            raise ConfigError("'secrets' must be an object", path=self.path)
        return secrets

    def _update(self, change: Any) -> None:
        _fs.update_json(self.path, change, default=_empty, mode=FILE_MODE)
        # update_json writes through a fresh 0600 temp file; this also tightens a file that an
        # older tool or the user created with wider permissions.
        if self.path.exists() and self.path.stat().st_mode & 0o077:
            os.chmod(self.path, FILE_MODE)


@dataclass(frozen=True, slots=True)
class KeyringBackend:
    """The OS keyring through the ``keyring`` package."""

    keyring: Any

    @property
    def name(self) -> str:
        kind = type(self.keyring)
        return f"keyring:{kind.__module__}.{kind.__qualname__}"

    def get(self, name: str) -> str | None:
        value = self.keyring.get_password(KEYRING_SERVICE, name)
        return value if isinstance(value, str) else None

    def set(self, name: str, value: str, *, provider: str | None) -> None:
        self.keyring.set_password(KEYRING_SERVICE, name, value)

    def delete(self, name: str) -> bool:
        from keyring.errors import PasswordDeleteError

        try:
            self.keyring.delete_password(KEYRING_SERVICE, name)
        except PasswordDeleteError:
            return False
        return True


def _empty() -> dict[str, Any]:
    return {"version": _FILE_VERSION, "secrets": {}}


def secrets_path() -> Path:
    """``<agent>/secrets.json``, resolved at call time."""
    return agent_dir() / "secrets.json"


def usable_keyring() -> Any | None:
    """The active keyring backend if one can really store secrets, else None."""
    try:
        import keyring
        from keyring.backends import chainer, fail, null
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # a broken third-party backend plugin must not break secret lookups
        return None
    if isinstance(backend, fail.Keyring | null.Keyring):
        return None
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return None
    try:
        priority = float(backend.priority)
    except Exception:  # backends compute priority by probing their service; failure = unusable
        return None
    return backend if priority > 0 else None


def backend(kind: Literal["auto", "file", "keyring"] | None = None) -> Backend:
    """The backend in use: ``kind``, else ``$LEMON_SECRETS_BACKEND``, else auto-detected.

    Raises:
        ConfigError: a keyring was demanded but none is usable, or the setting is unknown.
    """
    choice = (kind or os.environ.get("LEMON_SECRETS_BACKEND") or "auto").strip().lower()
    if choice == "file":
        return FileBackend(secrets_path())
    if choice not in ("auto", "keyring"):
        raise ConfigError(
            f"unknown secrets backend {choice!r}", hint="use LEMON_SECRETS_BACKEND=file or keyring"
        )
    found = usable_keyring()
    if found is not None:
        return KeyringBackend(found)
    if choice == "keyring":
        raise ConfigError(
            "no usable keyring backend",
            hint="pip install 'lemon-skills[keyring]', or set LEMON_SECRETS_BACKEND=file",
        )
    return FileBackend(secrets_path())


def get(name: str, *, env_fallback: bool = False) -> str | None:
    """Return the secret called ``name``, or None.

    With ``env_fallback`` an unset secret is read from the environment variable ``name``, then
    from its upper-case form with every non-alphanumeric character turned into ``_``
    (``github-oauth`` → ``GITHUB_OAUTH``).
    """
    _check_name(name)
    value = backend().get(name)
    if value is None and env_fallback:
        value = _from_env(name, os.environ)
    return value


def set(name: str, value: str, *, provider: str | None = None) -> None:  # noqa: A001
    """Store ``value`` under ``name`` (``provider`` tags who owns it, e.g. ``mcp_oauth``)."""
    _check_name(name)
    if not isinstance(value, str):
        raise TypeError("secret values are strings")
    backend().set(name, value, provider=provider)


def delete(name: str) -> bool:
    """Remove the secret; return whether it existed."""
    _check_name(name)
    return backend().delete(name)


def _from_env(name: str, env: Mapping[str, str]) -> str | None:
    for candidate in (name, re.sub(r"[^A-Za-z0-9]", "_", name).upper()):
        value = env.get(candidate)
        if value:
            return value
    return None


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ValueError("secret names are non-empty strings")
