"""Which state backend is configured: ``LEMON_DATABASE_URL``, then ``configure(database_url=)``,
then ``database_url`` in ``<agent dir>/state.json``; none of them means the embedded files.

Resolved at every call, so a host (or a test) can switch backends without a restart. A URL is
shown to people only through :func:`redact`, which drops the password.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from lemon_skills import _fs
from lemon_skills.context import current
from lemon_skills.errors import ConfigError
from lemon_skills.paths import agent_dir
from lemon_skills.settings import settings

ENV_VAR = "LEMON_DATABASE_URL"
SCHEMES = ("postgresql", "postgres")


def settings_path() -> Path:
    """The settings file that may name the database (``{"database_url": "..."}``)."""
    return agent_dir() / "state.json"


def database_url() -> str | None:
    """The configured database URL, or None for the embedded backend.

    Raises:
        ConfigError: the URL is not a ``postgresql://`` URL, or the settings file is unreadable.
    """
    url = os.environ.get(ENV_VAR) or settings().database_url or _from_file()
    if not url:
        return None
    check_url(url)
    return url


def check_url(url: str) -> None:
    """Refuse anything but a PostgreSQL URL (the only shared backend).

    Raises:
        ConfigError: another scheme, or no scheme at all.
    """
    if urlsplit(url).scheme not in SCHEMES:
        raise ConfigError(
            f"unsupported state database URL {redact(url)}",
            hint="use postgresql://USER@HOST:PORT/DATABASE, or unset LEMON_DATABASE_URL",
        )


def redact(url: str) -> str:
    """``url`` without its password (``postgresql://me:***@host/db``), safe to print or log."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username or ''}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _from_file() -> str | None:
    # Asked before every tool call: a missing file costs one stat, an unchanged one no read;
    # the path is remembered per agent-dir environment (building it is dearer than the stat).
    cache: dict[Any, Any] = current().service(_from_file, dict)
    where = (os.environ.get("LEMON_AGENT_DIR"), os.environ.get("HOME"))
    path = cache.get(where)
    if path is None:
        path = cache[where] = settings_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from exc
    stamp = (path, st.st_mtime_ns, st.st_size, st.st_ino)
    hit = cache.get("file")
    if hit is not None and hit[0] == stamp:
        return hit[1]  # type: ignore[no-any-return]
    value = _fs.read_json(path, default=dict).get("database_url")
    if value is not None and not isinstance(value, str):
        raise ConfigError('"database_url" must be a string', path=path)
    cache["file"] = (stamp, value or None)
    return value or None
